module tori.dev/tools/contractgen

go 1.26.0

require tori.dev/contract v0.0.0

replace tori.dev/contract => ../../contract
