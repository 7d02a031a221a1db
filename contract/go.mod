module tori.dev/contract

go 1.26.0
