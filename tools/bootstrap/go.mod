module tori.dev/tools/bootstrap

go 1.26.0

require (
	github.com/jackc/pgx/v5 v5.12.0
	gopkg.in/yaml.v3 v3.0.1
	tori.dev/pkg v0.0.0
)

replace (
	tori.dev/pkg => ../../pkg
	tori.dev/proto => ../../proto
)
