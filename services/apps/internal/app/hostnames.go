package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/domains"
)

// HostnameChecker moves pending hostnames to active once their TXT record holds the
// expected value. Several service instances may run one each: the store's unique index on
// active hostnames decides, so the first to verify wins and the others see the hostname no
// longer pending.
type HostnameChecker struct {
	Store    Store
	Resolver Resolver
	// Interval is the time between rounds; a hostname checked in one round is due again in
	// the next.
	Interval time.Duration
	Log      *slog.Logger
	Now      func() time.Time
	// Batch bounds the look-ups of one round.
	Batch int
}

// CheckOnce looks up the hostnames due for a check and returns how many became active.
func (c *HostnameChecker) CheckOnce(ctx context.Context) (int64, error) {
	now := c.Now()
	// Half the interval: a hostname checked in the previous round is due again in this one.
	due, err := c.Store.DueForCheck(ctx, now.Add(-c.Interval/2), max(c.Batch, 1))
	if err != nil {
		return 0, err
	}
	var activated int64
	for _, d := range due {
		if ctx.Err() != nil {
			return activated, ctx.Err()
		}
		if !c.holds(ctx, d.Verification()) {
			if err := c.Store.MarkChecked(ctx, d.ID, c.Now()); err != nil {
				return activated, err
			}
			continue
		}
		ok, err := c.activate(ctx, d.ID, stamp(c.Now()))
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

// activate makes the hostname active and publishes apps.domain.activated; false when it was
// removed, deleted or activated meanwhile, or another app has it active.
func (c *HostnameChecker) activate(ctx context.Context, id string, at time.Time) (bool, error) {
	activated := false
	err := c.Store.InTx(ctx, func(tx Tx) error {
		a, ok, err := tx.ActivateDomain(ctx, id, at)
		if err != nil || !ok {
			return err
		}
		activated = true
		return tx.Publish(ctx, appsbus.KeyDomainActivated, domainActivated(a, at))
	})
	if errors.Is(err, domains.ErrHostnameTaken) {
		return false, nil
	}
	return activated, err
}

func (c *HostnameChecker) holds(ctx context.Context, v domains.Verification) bool {
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
