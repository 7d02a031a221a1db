package domains

import (
	"context"
	"log/slog"
	"time"
)

// Resolver looks up TXT records (net.Resolver satisfies it).
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
}

// Checker moves pending hostnames to active once their TXT record holds the expected value.
// Several service instances may run one each: activation is decided by the store, so the
// first to verify wins and the others see the hostname no longer pending.
type Checker struct {
	Store    CheckStore
	Resolver Resolver
	Interval time.Duration
	Log      *slog.Logger
	Now      func() time.Time
	// Batch bounds the look-ups of one round.
	Batch int
}

// Run checks every Interval until ctx ends.
func (c *Checker) Run(ctx context.Context) error {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		if _, err := c.CheckOnce(ctx); err != nil && ctx.Err() == nil {
			c.Log.WarnContext(ctx, "domain check round failed", "err", err.Error())
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// CheckOnce looks up the hostnames due for a check and returns how many became active.
func (c *Checker) CheckOnce(ctx context.Context) (int, error) {
	now := c.Now()
	// Half the interval: a hostname checked in the previous round is due again in this one.
	due, err := c.Store.DueForCheck(ctx, now.Add(-c.Interval/2), max(c.Batch, 1))
	if err != nil {
		return 0, err
	}
	activated := 0
	for _, d := range due {
		if ctx.Err() != nil {
			return activated, ctx.Err()
		}
		v := d.Verification()
		if !c.holds(ctx, v) {
			if err := c.Store.MarkChecked(ctx, d.ID, c.Now()); err != nil {
				return activated, err
			}
			continue
		}
		ok, err := c.Store.Activate(ctx, d.ID, c.Now().UTC().Truncate(time.Microsecond))
		if err != nil {
			return activated, err
		}
		if ok {
			activated++
			c.Log.InfoContext(ctx, "custom hostname verified", "hostname", d.Hostname, "app_id", d.AppID)
		} else if err := c.Store.MarkChecked(ctx, d.ID, c.Now()); err != nil {
			return activated, err
		}
	}
	return activated, nil
}

func (c *Checker) holds(ctx context.Context, v Verification) bool {
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	records, err := c.Resolver.LookupTXT(lctx, v.Name)
	if err != nil {
		return false // NXDOMAIN, no record yet, or a resolver hiccup: try again next round
	}
	for _, r := range records {
		if r == v.Value {
			return true
		}
	}
	return false
}
