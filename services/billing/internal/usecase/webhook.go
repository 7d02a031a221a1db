package usecase

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/mirror"
)

// Provider event types with an effect beyond mirroring their object.
const eventPaymentFailed = "invoice.payment_failed"

// ApplyWebhook verifies one webhook delivery and applies its event to Tori's mirror, once
// (by event id) and in any order: each object keeps the report the provider made last
// (event creation time), so a late, older event never overwrites a newer one. A subscription
// event moves the account's plan; invoice.payment_failed starts the payment-failure hold.
// An event for an object of no known account is recorded and otherwise ignored: retrying it
// would not make the account known.
func (s *Service) ApplyWebhook(ctx context.Context, payload []byte, signature string) error {
	if s.pay == nil {
		return ErrUnavailable
	}
	ev, err := s.pay.Events.Verify(payload, signature)
	if err != nil {
		return err
	}
	// A customer's details are read outside the transaction: the event does not carry its
	// tax ids, and a call to the provider must not hold the account's lock.
	var fresh *mirror.Customer
	if ev.Customer != nil {
		c, err := s.pay.Provider.Customer(ctx, ev.Customer.ID)
		switch {
		case err == nil:
			checked, err := s.customerDetails(ctx, mirror.Customer{}, c)
			if err != nil {
				return err
			}
			fresh = &checked
		case !errors.Is(err, ErrProviderNotFound):
			return err
		}
	}
	return s.store.InTx(ctx, func(tx Tx) error {
		first, err := tx.MarkEvent(ctx, ev.ID, ev.Type, s.now())
		if err != nil || !first {
			return err
		}
		account, err := eventAccount(ctx, tx, ev)
		if err != nil || account == uuid.Nil {
			return err
		}
		if _, err := tx.LockAccount(ctx, accounts.Ref{ID: account}); err != nil && !errors.Is(err, accounts.ErrNotFound) {
			return err
		}
		switch {
		case ev.Subscription != nil:
			if _, err := s.putSubscription(ctx, tx, account, *ev.Subscription, ev.Created); err != nil {
				return err
			}
			return s.settlePlan(ctx, tx, account)
		case ev.Invoice != nil:
			c, err := tx.Customer(ctx, account)
			if err != nil && !isNotFound(err) {
				return err
			}
			if _, err := tx.PutInvoice(ctx, withVAT(invoiceRecord(account, *ev.Invoice, ev.Created), c, err == nil)); err != nil {
				return err
			}
			if ev.Type == eventPaymentFailed {
				if err := tx.MarkPaymentFailed(ctx, ev.Invoice.ID, ev.Created); err != nil {
					return err
				}
			}
			return s.settleHold(ctx, tx, account)
		case ev.CreditNote != nil:
			cn := ev.CreditNote
			return tx.PutCreditNote(ctx, mirror.CreditNote{ID: cn.ID, InvoiceID: cn.InvoiceID, AccountID: account,
				Number: cn.Number, Total: cn.Total, Created: cn.Created})
		case fresh != nil:
			c, err := tx.Customer(ctx, account)
			if isNotFound(err) {
				return nil // a customer billing did not create: not an account's
			}
			if err != nil {
				return err
			}
			c.Country, c.VATID, c.Business, c.VATIDValid, c.VATIDFormatOnly = fresh.Country, fresh.VATID, fresh.Business, fresh.VATIDValid, fresh.VATIDFormatOnly
			return tx.UpdateCustomer(ctx, c, s.now())
		}
		return nil
	})
}

// eventAccount is the account an event is about: metadata.account_id on the object (or on
// its subscription details), else the account whose customer the object belongs to.
// uuid.Nil when neither names a known account.
func eventAccount(ctx context.Context, tx Tx, ev Event) (uuid.UUID, error) {
	var named uuid.UUID
	var customer string
	switch {
	case ev.Subscription != nil:
		named, customer = ev.Subscription.AccountID, ev.Subscription.CustomerID
	case ev.Invoice != nil:
		named, customer = ev.Invoice.AccountID, ev.Invoice.CustomerID
	case ev.CreditNote != nil:
		customer = ev.CreditNote.CustomerID
	case ev.Customer != nil:
		named, customer = ev.Customer.AccountID, ev.Customer.ID
	default:
		return uuid.Nil, nil
	}
	if named != uuid.Nil {
		return named, nil
	}
	if customer == "" {
		return uuid.Nil, nil
	}
	c, err := tx.CustomerByProviderID(ctx, customer)
	if errors.Is(err, mirror.ErrNotFound) {
		return uuid.Nil, nil
	}
	return c.AccountID, err
}
