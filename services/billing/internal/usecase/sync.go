package usecase

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/mirror"
)

// Sync reads the account's customer, subscriptions, invoices and credit notes from the
// provider into Tori's mirror, moves the account's plan if its subscriptions say so, and
// returns the account's billing. While paid plans are off, or before the account has a
// customer, there is nothing to read and it is State.
func (s *Service) Sync(ctx context.Context, accountID uuid.UUID) (State, error) {
	if s.pay == nil {
		return s.syncedNothing(ctx, accountID)
	}
	c, err := s.store.Customer(ctx, accountID)
	if isNotFound(err) {
		return s.syncedNothing(ctx, accountID)
	}
	if err != nil {
		return State{}, err
	}
	p := s.pay.Provider
	pc, err := p.Customer(ctx, c.CustomerID)
	if err != nil {
		return State{}, err
	}
	subs, err := p.Subscriptions(ctx, c.CustomerID)
	if err != nil {
		return State{}, err
	}
	invs, err := p.Invoices(ctx, c.CustomerID)
	if err != nil {
		return State{}, err
	}
	notes := map[string][]CreditNote{}
	for _, inv := range invs {
		if notes[inv.ID], err = p.CreditNotes(ctx, inv.ID); err != nil {
			return State{}, err
		}
	}
	if c, err = s.customerDetails(ctx, c, pc); err != nil {
		return State{}, err
	}
	// What was just read is as new as anything the provider has said.
	observed := s.now()
	err = s.store.InTx(ctx, func(tx Tx) error {
		if _, err := tx.LockAccount(ctx, accounts.Ref{ID: accountID}); err != nil && !errors.Is(err, accounts.ErrNotFound) {
			return err
		}
		if err := tx.UpdateCustomer(ctx, c, observed); err != nil {
			return err
		}
		for _, sub := range subs {
			if _, err := s.putSubscription(ctx, tx, accountID, sub, observed); err != nil {
				return err
			}
		}
		for _, inv := range invs {
			if _, err := tx.PutInvoice(ctx, withVAT(invoiceRecord(accountID, inv, observed), c, true)); err != nil {
				return err
			}
			for _, cn := range notes[inv.ID] {
				if err := tx.PutCreditNote(ctx, mirror.CreditNote{ID: cn.ID, InvoiceID: inv.ID, AccountID: accountID,
					Number: cn.Number, Total: cn.Total, Created: cn.Created}); err != nil {
					return err
				}
			}
		}
		if err := s.settleHold(ctx, tx, accountID); err != nil {
			return err
		}
		return s.settlePlan(ctx, tx, accountID)
	})
	if err != nil {
		return State{}, err
	}
	return s.State(ctx, accountID)
}

// syncedNothing is Sync's answer when there was nothing to read: the state, once the request's
// audit entry is recorded (a sync that reads is recorded with the mirror's transaction).
func (s *Service) syncedNothing(ctx context.Context, accountID uuid.UUID) (State, error) {
	if err := s.recorded(ctx); err != nil {
		return State{}, err
	}
	return s.State(ctx, accountID)
}

// putSubscription records a provider subscription of the account as observed at observed.
// One whose price is none of the configured plans' is not Tori's to mirror and is skipped.
func (s *Service) putSubscription(ctx context.Context, tx Tx, accountID uuid.UUID, sub Subscription, observed time.Time) (bool, error) {
	pp, ok := s.pay.Prices.Lookup(sub.PriceID)
	if !ok {
		return false, nil
	}
	return tx.PutSubscription(ctx, mirror.Subscription{
		ID: sub.ID, AccountID: accountID, CustomerID: sub.CustomerID,
		Plan: pp.Plan, Interval: pp.Interval, Status: sub.Status,
		CurrentPeriodStart: sub.CurrentPeriodStart, CurrentPeriodEnd: sub.CurrentPeriodEnd,
		CancelAtPeriodEnd: sub.CancelAtPeriodEnd, Created: sub.Created, ObservedAt: observed,
	})
}

// settlePlan moves the account to the plan its subscriptions give it, announcing the change
// through the same path as every plan change (billing.account.plan_changed), so apps, deploys,
// logs and identity update their copies. An account without subscriptions is left alone.
func (s *Service) settlePlan(ctx context.Context, tx Tx, accountID uuid.UUID) error {
	subs, err := tx.Subscriptions(ctx, accountID)
	if err != nil {
		return err
	}
	plan, ok := mirror.Plan(subs)
	if !ok {
		return nil
	}
	current, err := tx.LockAccount(ctx, accounts.Ref{ID: accountID})
	if errors.Is(err, accounts.ErrNotFound) {
		// The provider spoke before identity's account.created reached billing: record the
		// account now; the late account.created then finds it and changes nothing.
		current = accounts.New(accountID, "", s.now())
		if _, err := tx.InsertAccount(ctx, current); err != nil {
			return err
		}
		if err := announce(ctx, tx, current); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	next, changed := current.ChangePlan(plan, s.now())
	if !changed {
		return nil
	}
	if err := tx.UpdateAccount(ctx, next); err != nil {
		return err
	}
	return announce(ctx, tx, next)
}

// invoiceRecord is a provider invoice as the mirror keeps it. The rate applied is read from
// the invoice's own amounts, in percent to one decimal: cents rounding moves the quotient by a
// few hundredths (156 on 744 is 20.97), and no VAT rate has more than one decimal.
func invoiceRecord(accountID uuid.UUID, inv Invoice, observed time.Time) mirror.Invoice {
	rate := 0.0
	if net := inv.Total - inv.TotalTax; net > 0 && inv.TotalTax > 0 {
		rate = math.Round(float64(inv.TotalTax)*1000/float64(net)) / 10
	}
	return mirror.Invoice{
		ID: inv.ID, AccountID: accountID, SubscriptionID: inv.SubscriptionID, Number: inv.Number,
		Status: inv.Status, Total: inv.Total, Currency: inv.Currency, VATRate: rate,
		HostedURL: inv.HostedURL, PDFURL: inv.PDFURL, Created: inv.Created, ObservedAt: observed,
	}
}
