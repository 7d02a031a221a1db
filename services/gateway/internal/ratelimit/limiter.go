// Package ratelimit counts requests in fixed windows and decides when a caller is over its
// limit. Counters live behind the Limiter interface, in the store RATE_LIMIT_STORE names:
// this process's memory (Memory, the default, right for a single gateway) or Redis (Redis),
// which every gateway instance shares.
package ratelimit

import (
	"context"
	"time"
)

// Count is the state of one bucket's current window.
type Count struct {
	N       int64         // requests counted in the window, including this one for Hit
	ResetIn time.Duration // time until the window ends
}

// Limiter keeps counters in fixed windows aligned to the Unix epoch, so every instance agrees
// where a window starts.
type Limiter interface {
	// Hit adds one to key's counter in the current window of length window.
	Hit(ctx context.Context, key string, window time.Duration) (Count, error)
	// Peek reads key's counter in the current window without adding to it.
	Peek(ctx context.Context, key string, window time.Duration) (Count, error)
}
