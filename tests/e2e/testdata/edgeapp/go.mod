module example.com/tori/edgeapp

go 1.22
