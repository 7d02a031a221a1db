package certs

import (
	"errors"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// ErrOrderLimit refuses an order past the zone's ACME order budget (ZONE_ACME_ORDERS_PER_HOUR):
// however many hostnames customers add, the zone stays within its CA's limits.
var ErrOrderLimit = errors.New("the zone's certificate order rate is exhausted; asked again at the next handshake or renewal check")

// ErrAccountOrderLimit refuses a new order past the account's daily cap
// (ZONE_ACME_NEW_ORDERS_PER_ACCOUNT_PER_DAY): one customer's churn of hostnames cannot use up
// the zone's budget.
var ErrAccountOrderLimit = errors.New("the account's daily cap of new certificates is reached; the order is tried again later")

// RenewalShare is the part of the zone's hourly budget kept for renewals: new orders never
// take it, so no amount of new hostnames lets a held certificate expire. Renewals may also
// use what new orders leave.
const RenewalShare = 0.25

// capWindow is the span an account's daily cap counts new orders over.
const capWindow = 24 * time.Hour

// Refusal reasons, as the refusals metric names them.
const (
	reasonZoneBudget      = "zone_budget"
	reasonAccountDailyCap = "account_daily_cap"
)

// budget is the rule an ACME order passes (on demand and ordered ahead alike):
//   - a renewal takes from the renewals' reserve, else from the new orders' share; it never
//     counts against an account;
//   - a new order counts against its account's cap over the last 24 hours, then takes from
//     the new orders' share only;
//   - a refused order takes nothing from any bucket or cap.
//
// It is in memory, per edge process: a restart starts the day afresh (a zone's edges each keep
// their own; the CA's own limits stay the outer bound).
type budget struct {
	newOrders *rate.Limiter // nil: unbounded
	renewals  *rate.Limiter // nil: unbounded (then newOrders is too)
	perDay    int           // new orders per account per 24 hours; 0: no cap
	mu        sync.Mutex
	recent    map[string][]time.Time // an account's new orders within capWindow, oldest first
}

// newBudget splits perHour between new orders and the renewals' reserve (each a token bucket
// with a burst of a tenth of its hour). perHour <= 0 leaves the zone unbounded.
func newBudget(perHour, perAccountPerDay int, now time.Time) *budget {
	b := &budget{perDay: max(perAccountPerDay, 0), recent: map[string][]time.Time{}}
	if perHour > 0 {
		reserve := max(1, int(float64(perHour)*RenewalShare))
		b.renewals = hourlyAt(reserve, now)
		b.newOrders = hourlyAt(max(1, perHour-reserve), now)
	}
	return b
}

// hourlyAt is a token bucket of n an hour with a burst of a tenth, full at now: a zone's start
// (or a batch of new hostnames) is served at once, a flood is spread over the hour.
func hourlyAt(n int, now time.Time) *rate.Limiter {
	l := rate.NewLimiter(rate.Limit(float64(n)/3600), max(1, n/10))
	l.AllowN(now, 0) // start the bucket's clock at now (tests run on a clock of their own)
	return l
}

// allow decides one order of account ("" when the hostname's account is unknown: then only
// the zone's budget applies) at now, and takes what it grants.
func (b *budget) allow(renewal bool, account string, now time.Time) (reason string, err error) {
	if renewal {
		if b.renewals == nil || b.renewals.AllowN(now, 1) || b.newOrders.AllowN(now, 1) {
			return "", nil
		}
		return reasonZoneBudget, ErrOrderLimit
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var kept []time.Time
	if b.perDay > 0 && account != "" {
		kept = b.recent[account]
		for len(kept) > 0 && now.Sub(kept[0]) >= capWindow {
			kept = kept[1:]
		}
		if len(kept) == 0 {
			delete(b.recent, account) // an account quiet for a day is forgotten
		} else {
			b.recent[account] = kept
		}
		if len(kept) >= b.perDay {
			return reasonAccountDailyCap, ErrAccountOrderLimit
		}
	}
	if b.newOrders != nil && !b.newOrders.AllowN(now, 1) {
		return reasonZoneBudget, ErrOrderLimit
	}
	if b.perDay > 0 && account != "" {
		b.recent[account] = append(kept, now)
	}
	return "", nil
}
