//go:build testcontainers

package testinfra

import (
	"context"

	"github.com/testcontainers/testcontainers-go/modules/postgres"
	"github.com/testcontainers/testcontainers-go/modules/rabbitmq"
	"github.com/testcontainers/testcontainers-go/modules/redis"
)

// The containers live for the whole test process; testcontainers' reaper removes them after.

func startPostgres(ctx context.Context) (string, error) {
	c, err := postgres.Run(ctx, "postgres:15-alpine",
		postgres.WithDatabase("postgres"),
		postgres.WithUsername("postgres"),
		postgres.WithPassword("postgres"),
		postgres.BasicWaitStrategies(),
	)
	if err != nil {
		return "", err
	}
	return c.ConnectionString(ctx, "sslmode=disable")
}

func startRabbitMQ(ctx context.Context) (string, error) {
	c, err := rabbitmq.Run(ctx, "rabbitmq:3.13-alpine")
	if err != nil {
		return "", err
	}
	return c.AmqpURL(ctx)
}

func startRedis(ctx context.Context) (string, error) {
	c, err := redis.Run(ctx, "redis:7-alpine")
	if err != nil {
		return "", err
	}
	return c.ConnectionString(ctx)
}
