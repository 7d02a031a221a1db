package main

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"tori.dev/services/gateway/internal/config"
	"tori.dev/services/gateway/internal/logstreams"
	"tori.dev/services/gateway/internal/ratelimit"
)

// counters are what gateways behind one load balancer must count together: the rate-limit
// windows and the accounts' open log streams, both in the store RATE_LIMIT_STORE names.
type counters struct {
	limiter ratelimit.Limiter
	places  logstreams.Places
	close   func()
}

// openCounters opens the store RATE_LIMIT_STORE names: this process's memory, or Redis.
func openCounters(cfg config.Config) (counters, error) {
	if cfg.RateLimitStore != "redis" {
		return counters{limiter: ratelimit.NewMemory(nil), places: logstreams.NewMemory(), close: func() {}}, nil
	}
	opts, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		// The URL may hold a password: say what is wrong, never what it is.
		return counters{}, fmt.Errorf("REDIS_URL is not a redis:// URL")
	}
	client := redis.NewClient(opts)
	return counters{
		limiter: ratelimit.NewRedis(client, cfg.RateLimitPrefix),
		places:  logstreams.NewRedisPlaces(client, cfg.RateLimitPrefix),
		close:   func() { client.Close() },
	}, nil
}
