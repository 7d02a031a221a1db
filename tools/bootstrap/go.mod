module tori.dev/tools/bootstrap

go 1.26.0

require tori.dev/pkg v0.0.0

replace (
	tori.dev/pkg => ../../pkg
	tori.dev/proto => ../../proto
)
