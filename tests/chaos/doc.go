// Package chaos is the fault suite (`make chaos`, not part of `make test`): while a load
// creates apps, writes env, deploys static sites and ingests logs through the real services,
// it kills each service with SIGKILL in turn and restarts it, restarts the broker and
// restarts Postgres; then it checks that everything converges within a minute with nothing
// lost and nothing applied twice, and that an every-minute cron job left exactly one run per
// tick through it all, and that a log drain on one app received every line published for
// it (repeats counted). It prints what it did and the counts.
//
// It restarts the machine's RabbitMQ and Postgres, so it runs alone, and only with the build
// tag chaos, which `make chaos` sets and `make test` does not.
package chaos
