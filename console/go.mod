module tori.dev/console

go 1.26.0
