package logstreams

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisPlaces is Places shared by every gateway: one sorted set per account, a member per
// open stream scored with its lease's end on Redis's clock (so gateways whose clocks drift
// agree). Lapsed members are dropped before counting, and the set itself expires with its
// last lease, so a gateway that dies holding places gives them back within a lease.
type RedisPlaces struct {
	client *redis.Client
	prefix string
}

// NewRedisPlaces keeps places in client under keys starting with prefix.
func NewRedisPlaces(client *redis.Client, prefix string) *RedisPlaces {
	return &RedisPlaces{client: client, prefix: prefix}
}

// take holds ARGV[1] in KEYS[1] for ARGV[3] ms unless ARGV[2] unlapsed leases are held there.
var take = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
	return 0
end
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`)

// renew extends the leases ARGV[2..] of KEYS[1] by ARGV[1] ms. A lease that lapsed (Redis
// was unreachable, or the gateway stalled) is held again rather than its stream cut: the
// account may briefly hold more than its cap, until streams end.
var renew = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for i = 2, #ARGV do
	redis.call('ZADD', KEYS[1], now + ttl, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`)

func (r *RedisPlaces) key(account string) string { return r.prefix + "streams:" + account }

// Take implements Places.
func (r *RedisPlaces) Take(ctx context.Context, l Lease, max int, ttl time.Duration) (bool, error) {
	n, err := take.Run(ctx, r.client, []string{r.key(l.Account)}, l.ID, max, ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("logstreams: redis: %w", err)
	}
	return n == 1, nil
}

// Renew implements Places: one script call per account, pipelined.
func (r *RedisPlaces) Renew(ctx context.Context, leases []Lease, ttl time.Duration) error {
	byAccount := map[string][]any{}
	for _, l := range leases {
		if byAccount[l.Account] == nil {
			byAccount[l.Account] = []any{ttl.Milliseconds()}
		}
		byAccount[l.Account] = append(byAccount[l.Account], l.ID)
	}
	if len(byAccount) == 0 {
		return nil
	}
	// Load once so the pipeline's EVALSHAs find the script (a restarted Redis forgets it).
	if err := renew.Load(ctx, r.client).Err(); err != nil {
		return fmt.Errorf("logstreams: redis: %w", err)
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for account, args := range byAccount {
			renew.EvalSha(ctx, p, []string{r.key(account)}, args...)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("logstreams: redis: %w", err)
	}
	return nil
}

// Free implements Places.
func (r *RedisPlaces) Free(ctx context.Context, l Lease) error {
	if err := r.client.ZRem(ctx, r.key(l.Account), l.ID).Err(); err != nil {
		return fmt.Errorf("logstreams: redis: %w", err)
	}
	return nil
}
