package usecase

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/domains"
)

// HostnameChecker looks up the TXT records of custom hostnames that are due: a pending claim
// becomes active once its record holds and is removed after Policy.PendingTTL; an active
// hostname is re-checked every Policy.ActiveEvery, its owner is told (through
// apps.domain.verification_failing) when the record first goes missing, and after
// Policy.Grace without it the hostname is pending again and the edge stops serving it
// (apps.domain.deactivated).
//
// Several service instances may run one each: every change is written only if the row is
// still as the check read it, and the unique index on active hostnames decides between two
// apps, so one instance wins and publishes.
type HostnameChecker struct {
	Store    Store
	Resolver Resolver
	// Interval is the time between rounds; a hostname due within half of it is checked in
	// this round, so a hostname checked in one round is due again in the next.
	Interval time.Duration
	// Policy is the life of a claim; zero fields take domains.DefaultPolicy's, but
	// PendingEvery, which defaults to Interval.
	Policy domains.Policy
	Log    *slog.Logger
	Now    func() time.Time
	// Batch bounds the hostnames of one round.
	Batch int
	// Parallel bounds the look-ups in flight at once (default 1).
	Parallel int
	// LookupTimeout bounds each look-up (default 5 s); one that times out changes nothing.
	LookupTimeout time.Duration
}

// CheckOnce checks the hostnames that are due and returns how many became active. A check
// that fails is logged and tried again at the next round; the others go on.
func (c *HostnameChecker) CheckOnce(ctx context.Context) (int64, error) {
	p := c.policy()
	due, err := c.Store.DueForCheck(ctx, c.Now().Add(c.Interval/2), max(c.Batch, 1))
	if err != nil {
		return 0, err
	}
	var (
		activated atomic.Int64
		mu        sync.Mutex
		errs      []error
		g         errgroup.Group
	)
	g.SetLimit(max(c.Parallel, 1))
	for _, d := range due {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			ok, err := c.check(ctx, p, d)
			if ok {
				activated.Add(1)
			}
			if err != nil && ctx.Err() == nil {
				c.Log.WarnContext(ctx, "custom hostname check", "hostname", d.Hostname, "err", err.Error())
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	g.Wait()
	if ctx.Err() != nil {
		return activated.Load(), ctx.Err()
	}
	return activated.Load(), errors.Join(errs...)
}

// check looks d up once and applies the policy's decision; true when it became active.
func (c *HostnameChecker) check(ctx context.Context, p domains.Policy, d domains.Domain) (bool, error) {
	if p.Expired(d, c.Now()) {
		return false, c.expire(ctx, d)
	}
	found := c.lookup(ctx, d.Verification())
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	now := stamp(c.Now())
	dec := p.Decide(d, found, now)
	switch dec.Outcome {
	case domains.Expire:
		return false, c.expire(ctx, d)
	case domains.Activate:
		return c.publishing(ctx, d, dec, now)
	case domains.FirstMiss, domains.Deactivate:
		_, err := c.publishing(ctx, d, dec, now)
		return false, err
	}
	_, _, err := c.Store.SaveCheck(ctx, d, dec.Next, now)
	return false, err
}

// publishing writes a decision that others must hear of, with its event, in one
// transaction; false when another check changed the hostname first.
func (c *HostnameChecker) publishing(ctx context.Context, d domains.Domain, dec domains.Decision, now time.Time) (bool, error) {
	saved := false
	err := c.Store.InTx(ctx, func(tx Tx) error {
		a, ok, err := tx.SaveCheck(ctx, d, dec.Next, now)
		if err != nil || !ok {
			return err
		}
		saved = true
		switch dec.Outcome {
		case domains.Activate:
			return tx.Publish(ctx, appsbus.KeyDomainActivated, domainActivated(a, now))
		case domains.FirstMiss:
			return tx.Publish(ctx, appsbus.KeyDomainVerificationFailing,
				domainVerificationFailing(a, d.Verification(), now, c.policy().DeactivateAt(now)))
		default:
			return tx.Publish(ctx, appsbus.KeyDomainDeactivated, domainDeactivated(a, now))
		}
	})
	if errors.Is(err, domains.ErrHostnameTaken) {
		// Another app has it active: this claim stays pending, looked up again later.
		still := c.policy().Decide(d, domains.RecordMissing, now)
		_, _, err := c.Store.SaveCheck(ctx, d, still.Next, now)
		return false, err
	}
	if err != nil || !saved {
		return false, err
	}
	switch dec.Outcome {
	case domains.Activate:
		c.Log.InfoContext(ctx, "custom hostname verified", "hostname", d.Hostname, "app_id", d.AppID)
	case domains.FirstMiss:
		c.Log.InfoContext(ctx, "custom hostname record missing", "hostname", d.Hostname, "app_id", d.AppID)
	case domains.Deactivate:
		c.Log.InfoContext(ctx, "custom hostname back to pending: record missing too long", "hostname", d.Hostname, "app_id", d.AppID)
	}
	return true, nil
}

func (c *HostnameChecker) expire(ctx context.Context, d domains.Domain) error {
	ok, err := c.Store.ExpireDomain(ctx, d)
	if ok {
		c.Log.InfoContext(ctx, "custom hostname claim expired", "hostname", d.Hostname, "app_id", d.AppID)
	}
	return err
}

// lookup reads the TXT record within the look-up's own timeout. Only a timeout says nothing
// about the record: a name that does not exist, a record without the value and a server
// failure (as for a domain whose name servers are gone) all count as missing.
func (c *HostnameChecker) lookup(ctx context.Context, v domains.Verification) domains.Lookup {
	timeout := c.LookupTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	records, err := c.Resolver.LookupTXT(lctx, v.Name)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &dnsErr) && dnsErr.IsTimeout {
			return domains.LookupFailed
		}
		return domains.RecordMissing
	}
	for _, r := range records {
		if r == v.Value {
			return domains.RecordHolds
		}
	}
	return domains.RecordMissing
}

func (c *HostnameChecker) policy() domains.Policy {
	p, def := c.Policy, domains.DefaultPolicy
	if p.PendingTTL <= 0 {
		p.PendingTTL = def.PendingTTL
	}
	if p.PendingEvery <= 0 {
		p.PendingEvery = c.Interval
	}
	if p.ActiveEvery <= 0 {
		p.ActiveEvery = def.ActiveEvery
	}
	if p.MissingEvery <= 0 {
		p.MissingEvery = def.MissingEvery
	}
	if p.Grace <= 0 {
		p.Grace = def.Grace
	}
	return p
}
