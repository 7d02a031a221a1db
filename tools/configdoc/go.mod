module tori.dev/tools/configdoc

go 1.26.0
