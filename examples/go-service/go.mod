module example.com/tori/go-service

go 1.22

require github.com/go-chi/chi/v5 v5.2.1
