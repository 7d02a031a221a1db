package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Limiter whose counters every gateway instance shares: one script call per
// request, which reads the window from Redis's own clock (so instances whose clocks drift
// still agree where a window starts), counts, and sets the counter to expire when its window
// has ended. Windows stay fixed: a sliding or GCRA scheme would let more than the limit
// through in some minute.
type Redis struct {
	client *redis.Client
	prefix string
}

// NewRedis counts in client under keys starting with prefix.
func NewRedis(client *redis.Client, prefix string) *Redis {
	return &Redis{client: client, prefix: prefix}
}

// count adds ARGV[2] (0 for a peek, which creates nothing) to KEYS[1]'s counter in the window
// of ARGV[1] milliseconds that holds Redis's now, and returns the count and the milliseconds
// left in the window. The key names the window's length as well as its start: an hour's window
// and a minute's start together at every hour, and must not count together. A counter outlives
// its window by a second, so a request that read the window just before its end still finds it.
var count = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local length = tonumber(ARGV[1])
local start = now - (now % length)
local key = KEYS[1] .. '@' .. length .. '@' .. start
local left = start + length - now
local n
if tonumber(ARGV[2]) > 0 then
	n = redis.call('INCRBY', key, ARGV[2])
	if n == tonumber(ARGV[2]) then
		redis.call('PEXPIRE', key, left + 1000)
	end
else
	n = tonumber(redis.call('GET', key) or '0')
end
return {n, left}
`)

// Hit implements Limiter.
func (r *Redis) Hit(ctx context.Context, key string, window time.Duration) (Count, error) {
	return r.run(ctx, key, window, 1)
}

// Peek implements Limiter.
func (r *Redis) Peek(ctx context.Context, key string, window time.Duration) (Count, error) {
	return r.run(ctx, key, window, 0)
}

func (r *Redis) run(ctx context.Context, key string, window time.Duration, add int) (Count, error) {
	res, err := count.Run(ctx, r.client, []string{r.prefix + key}, window.Milliseconds(), add).Int64Slice()
	if err != nil {
		return Count{}, fmt.Errorf("ratelimit: redis: %w", err)
	}
	if len(res) != 2 {
		return Count{}, fmt.Errorf("ratelimit: redis: unexpected answer %v", res)
	}
	return Count{N: res[0], ResetIn: time.Duration(res[1]) * time.Millisecond}, nil
}
