package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/mirror"
)

// Checkout starts buying plan at interval and returns the hosted checkout's URL. The request
// is checked first and a malformed one refused with its own error (catalog.ErrUnknownPlan,
// ErrNotPurchasable, ErrUnknownInterval), whether or not paid plans are on; then
// ErrUnavailable while they are off, and ErrAlreadySubscribed when Tori's mirror holds a
// subscription that has not ended.
func (s *Service) Checkout(ctx context.Context, accountID uuid.UUID, plan, interval string) (string, error) {
	p, err := catalog.Purchasable(plan)
	if err != nil {
		return "", err
	}
	iv, err := catalog.ParseInterval(interval)
	if err != nil {
		return "", err
	}
	if s.pay == nil {
		return "", ErrUnavailable
	}
	subs, err := s.store.Subscriptions(ctx, accountID)
	if err != nil {
		return "", err
	}
	if mirror.Subscribed(subs) {
		return "", ErrAlreadySubscribed
	}
	price, ok := s.pay.Prices.ID(p.Name, iv)
	if !ok {
		// Configuration is checked at start, so this is a programming error, not the caller's.
		return "", fmt.Errorf("billing: no price configured for %s per %s", p.Name, iv)
	}
	customerID, personal, err := s.customer(ctx, accountID)
	if err != nil {
		return "", err
	}
	url, err := s.pay.Provider.CreateCheckoutSession(ctx, NewCheckout{
		AccountID:  accountID,
		Personal:   personal,
		CustomerID: customerID,
		PriceID:    price,
		SuccessURL: s.pay.ConsoleURL + "/billing?checkout=done",
		CancelURL:  s.pay.ConsoleURL + "/billing",
	})
	if err != nil {
		return "", err
	}
	return url, s.recorded(ctx)
}

// Portal opens the provider's billing portal for the account and returns its URL:
// ErrUnavailable while paid plans are off.
func (s *Service) Portal(ctx context.Context, accountID uuid.UUID) (string, error) {
	if s.pay == nil {
		return "", ErrUnavailable
	}
	customerID, _, err := s.customer(ctx, accountID)
	if err != nil {
		return "", err
	}
	url, err := s.pay.Provider.CreatePortalSession(ctx, customerID, s.pay.ConsoleURL+"/billing")
	if err != nil {
		return "", err
	}
	return url, s.recorded(ctx)
}

// recorded commits the request's audit entry (the gate's pending write, pgstore.WithPending)
// in a transaction of billing's own when no write of the request carried it already: opening
// a checkout or the portal changes nothing in billing's tables once the customer exists.
func (s *Service) recorded(ctx context.Context) error {
	return s.store.InTx(ctx, func(Tx) error { return nil })
}

// customer is the team's customer at the provider, created (with metadata.team_id, and
// metadata.account_id for a personal team) the first time it is needed; personal tells which
// kind of team it is. Two first requests at once may both create one; the first recorded wins
// and the other stays an unused customer at the provider, which costs nothing.
func (s *Service) customer(ctx context.Context, accountID uuid.UUID) (id string, personal bool, err error) {
	a, err := s.AccountPlan(ctx, accountID)
	if err != nil {
		return "", false, err
	}
	c, err := s.store.Customer(ctx, accountID)
	if err == nil {
		return c.CustomerID, a.Personal, nil
	}
	if !isNotFound(err) {
		return "", false, err
	}
	id, err = s.pay.Provider.CreateCustomer(ctx, NewCustomer{AccountID: accountID, Personal: a.Personal, Email: a.Email})
	if err != nil {
		return "", false, err
	}
	err = s.store.InTx(ctx, func(tx Tx) error {
		inserted, err := tx.InsertCustomer(ctx, mirror.Customer{AccountID: accountID, CustomerID: id}, s.now())
		if err != nil || inserted {
			return err
		}
		won, err := tx.Customer(ctx, accountID)
		id = won.CustomerID
		return err
	})
	return id, a.Personal, err
}

func isNotFound(err error) bool { return errors.Is(err, mirror.ErrNotFound) }
