package appsbus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
)

// Requester sends one request and waits for its answer; *bus.Conn is one.
type Requester interface {
	Request(ctx context.Context, queue string, req, reply proto.Message) error
}

// ErrAppUnavailable means the apps service could not say whether the app exists (it is down,
// slow or answered nonsense). Whoever asked answers 503 service_unavailable rather than a
// 404 that may be false.
var ErrAppUnavailable = errors.New("apps: app lookup unavailable")

// AppClient asks the apps service whether an account owns a live app, for a service that
// has no copy of it yet. The answer is the app as apps.app.created carries it, so the asker
// records it exactly as its consumer of that event would.
type AppClient struct {
	Bus Requester
	// Timeout bounds one question when the context has no earlier deadline; zero leaves it to
	// the bus's request timeout.
	Timeout time.Duration
}

// Lookup returns accountID's live app named slug, nil when there is none (unknown, deleted
// or another account's), or an error wrapping ErrAppUnavailable.
func (c AppClient) Lookup(ctx context.Context, accountID, slug string) (*appsv1.AppCreated, error) {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	reply := &appsv1.AppLookupReply{}
	if err := c.Bus.Request(ctx, QueueAppLookup, &appsv1.AppLookupRequest{AccountId: accountID, Slug: slug}, reply); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAppUnavailable, err)
	}
	a := reply.GetApp()
	if a == nil {
		return nil, nil
	}
	if a.GetAppId() == "" || a.GetAccountId() != accountID || a.GetSlug() != slug {
		return nil, fmt.Errorf("%w: apps answered another app", ErrAppUnavailable)
	}
	return a, nil
}
