package main

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"tori.dev/services/gateway/internal/config"
	"tori.dev/services/gateway/internal/ratelimit"
)

// openLimiter is the rate-limit store RATE_LIMIT_STORE names, and what closes it.
func openLimiter(cfg config.Config) (ratelimit.Limiter, func(), error) {
	if cfg.RateLimitStore != "redis" {
		return ratelimit.NewMemory(nil), func() {}, nil
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		// The URL may hold a password: say what is wrong, never what it is.
		return nil, nil, fmt.Errorf("REDIS_URL is not a redis:// URL")
	}
	client := redis.NewClient(opts)
	return ratelimit.NewRedis(client, cfg.RateLimitPrefix), func() { client.Close() }, nil
}
