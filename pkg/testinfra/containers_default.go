//go:build !testcontainers

package testinfra

import (
	"context"
	"errors"
)

// Without the testcontainers tag the servers must come from the environment, which keeps
// Docker's client out of every ordinary test binary.

func startPostgres(context.Context) (string, error) {
	return "", errors.New("TEST_DATABASE_URL is not set; set it or build with -tags testcontainers and a Docker engine")
}

func startRabbitMQ(context.Context) (string, error) {
	return "", errors.New("TEST_AMQP_URL is not set; set it or build with -tags testcontainers and a Docker engine")
}

func startRedis(context.Context) (string, error) {
	return "", errors.New("TEST_REDIS_URL is not set; set it or build with -tags testcontainers and a Docker engine")
}
