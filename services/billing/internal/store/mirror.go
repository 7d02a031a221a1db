package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/mirror"
)

// querier is what both the pool and a transaction offer, so reads work in and out of one.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

const customerColumns = `account_id, customer_id, country, vat_id, business, vat_id_valid, vat_id_format_only`

func scanCustomer(row pgx.Row) (mirror.Customer, error) {
	var c mirror.Customer
	err := row.Scan(&c.AccountID, &c.CustomerID, &c.Country, &c.VATID, &c.Business, &c.VATIDValid, &c.VATIDFormatOnly)
	if errors.Is(err, pgx.ErrNoRows) {
		return mirror.Customer{}, mirror.ErrNotFound
	}
	if err != nil {
		return mirror.Customer{}, fmt.Errorf("store: read customer: %w", err)
	}
	return c, nil
}

// Customer is the account's customer; mirror.ErrNotFound when none was created.
func (s *Store) Customer(ctx context.Context, accountID uuid.UUID) (mirror.Customer, error) {
	return scanCustomer(s.pool.QueryRow(ctx, `SELECT `+customerColumns+` FROM customers WHERE account_id = $1`, accountID))
}

// FormatOnlyCustomers are the customers whose VAT ID was judged by its format alone.
func (s *Store) FormatOnlyCustomers(ctx context.Context, limit int) ([]mirror.Customer, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+customerColumns+` FROM customers WHERE vat_id_format_only ORDER BY updated_at LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: list format-only customers: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (mirror.Customer, error) { return scanCustomer(r) })
}

// Subscriptions are the account's subscriptions.
func (s *Store) Subscriptions(ctx context.Context, accountID uuid.UUID) ([]mirror.Subscription, error) {
	return subscriptions(ctx, s.pool, accountID)
}

// Invoices are the account's invoices, newest first, each with its credit notes.
func (s *Store) Invoices(ctx context.Context, accountID uuid.UUID) ([]mirror.Invoice, error) {
	return invoices(ctx, s.pool, accountID)
}

// InsertCustomer records the account's customer unless one is recorded already; inserted
// tells which.
func (t Tx) InsertCustomer(ctx context.Context, c mirror.Customer, now time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO customers (`+customerColumns+`, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) ON CONFLICT (account_id) DO NOTHING`,
		c.AccountID, c.CustomerID, c.Country, c.VATID, c.Business, c.VATIDValid, c.VATIDFormatOnly, now)
	if err != nil {
		return false, fmt.Errorf("store: insert customer: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Customer is the account's customer inside the transaction.
func (t Tx) Customer(ctx context.Context, accountID uuid.UUID) (mirror.Customer, error) {
	return scanCustomer(t.tx.QueryRow(ctx, `SELECT `+customerColumns+` FROM customers WHERE account_id = $1`, accountID))
}

// CustomerByProviderID finds the customer the provider knows as customerID.
func (t Tx) CustomerByProviderID(ctx context.Context, customerID string) (mirror.Customer, error) {
	return scanCustomer(t.tx.QueryRow(ctx, `SELECT `+customerColumns+` FROM customers WHERE customer_id = $1`, customerID))
}

// UpdateCustomer writes the customer's billing details.
func (t Tx) UpdateCustomer(ctx context.Context, c mirror.Customer, now time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE customers SET country = $2, vat_id = $3, business = $4, vat_id_valid = $5,
		vat_id_format_only = $6, updated_at = $7 WHERE account_id = $1`,
		c.AccountID, c.Country, c.VATID, c.Business, c.VATIDValid, c.VATIDFormatOnly, now)
	if err != nil {
		return fmt.Errorf("store: update customer: %w", err)
	}
	return nil
}

// Subscriptions are the account's subscriptions inside the transaction.
func (t Tx) Subscriptions(ctx context.Context, accountID uuid.UUID) ([]mirror.Subscription, error) {
	return subscriptions(ctx, t.tx, accountID)
}

// PutSubscription records s unless what is recorded was observed later; applied tells
// whether s was written.
func (t Tx) PutSubscription(ctx context.Context, s mirror.Subscription) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO subscriptions (subscription_id, account_id, customer_id, plan, interval, status,
			current_period_start, current_period_end, cancel_at_period_end, created_at, observed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (subscription_id) DO UPDATE SET plan = EXCLUDED.plan, interval = EXCLUDED.interval,
			status = EXCLUDED.status, current_period_start = EXCLUDED.current_period_start,
			current_period_end = EXCLUDED.current_period_end, cancel_at_period_end = EXCLUDED.cancel_at_period_end,
			observed_at = EXCLUDED.observed_at
		WHERE subscriptions.observed_at <= EXCLUDED.observed_at`,
		s.ID, s.AccountID, s.CustomerID, string(s.Plan), string(s.Interval), s.Status,
		nullTime(s.CurrentPeriodStart), nullTime(s.CurrentPeriodEnd), s.CancelAtPeriodEnd, s.Created, s.ObservedAt)
	if err != nil {
		return false, fmt.Errorf("store: put subscription: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// PutInvoice records inv unless what is recorded was observed later; applied tells whether
// inv was written. The hold's first failed attempt is not part of it (see MarkPaymentFailed).
func (t Tx) PutInvoice(ctx context.Context, inv mirror.Invoice) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO invoices (invoice_id, account_id, subscription_id, number, status, total, currency,
			vat_rate, reverse_charge, hosted_url, pdf_url, created_at, observed_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (invoice_id) DO UPDATE SET subscription_id = EXCLUDED.subscription_id, number = EXCLUDED.number,
			status = EXCLUDED.status, total = EXCLUDED.total, currency = EXCLUDED.currency, vat_rate = EXCLUDED.vat_rate,
			reverse_charge = EXCLUDED.reverse_charge, hosted_url = EXCLUDED.hosted_url, pdf_url = EXCLUDED.pdf_url,
			observed_at = EXCLUDED.observed_at
		WHERE invoices.observed_at <= EXCLUDED.observed_at`,
		inv.ID, inv.AccountID, inv.SubscriptionID, inv.Number, inv.Status, inv.Total, inv.Currency,
		inv.VATRate, inv.ReverseCharge, inv.HostedURL, inv.PDFURL, inv.Created, inv.ObservedAt)
	if err != nil {
		return false, fmt.Errorf("store: put invoice: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// PutCreditNote records a credit note; a credit note does not change once issued.
func (t Tx) PutCreditNote(ctx context.Context, cn mirror.CreditNote) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO credit_notes (credit_note_id, invoice_id, account_id, number, total, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (credit_note_id) DO UPDATE SET number = EXCLUDED.number, total = EXCLUDED.total`,
		cn.ID, cn.InvoiceID, cn.AccountID, cn.Number, cn.Total, cn.Created)
	if err != nil {
		return fmt.Errorf("store: put credit note: %w", err)
	}
	return nil
}

// MarkPaymentFailed keeps the earliest failed payment attempt of the invoice.
func (t Tx) MarkPaymentFailed(ctx context.Context, invoiceID string, at time.Time) error {
	_, err := t.tx.Exec(ctx, `UPDATE invoices SET first_failed_at = LEAST(COALESCE(first_failed_at, $2), $2) WHERE invoice_id = $1`,
		invoiceID, at)
	if err != nil {
		return fmt.Errorf("store: mark payment failed: %w", err)
	}
	return nil
}

// MarkEvent records a provider event as applied; first is false when it was applied already.
func (t Tx) MarkEvent(ctx context.Context, eventID, eventType string, now time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `INSERT INTO provider_events (event_id, type, applied_at) VALUES ($1, $2, $3)
		ON CONFLICT (event_id) DO NOTHING`, eventID, eventType, now)
	if err != nil {
		return false, fmt.Errorf("store: mark event: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

func subscriptions(ctx context.Context, q querier, accountID uuid.UUID) ([]mirror.Subscription, error) {
	rows, err := q.Query(ctx, `SELECT subscription_id, account_id, customer_id, plan, interval, status,
			current_period_start, current_period_end, cancel_at_period_end, created_at, observed_at
		FROM subscriptions WHERE account_id = $1 ORDER BY created_at, subscription_id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: read subscriptions: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (mirror.Subscription, error) {
		var s mirror.Subscription
		var plan, interval string
		var start, end *time.Time
		if err := r.Scan(&s.ID, &s.AccountID, &s.CustomerID, &plan, &interval, &s.Status, &start, &end,
			&s.CancelAtPeriodEnd, &s.Created, &s.ObservedAt); err != nil {
			return s, fmt.Errorf("store: read subscription: %w", err)
		}
		s.Plan, s.Interval = catalog.Name(plan), catalog.Interval(interval)
		s.CurrentPeriodStart, s.CurrentPeriodEnd = fromNull(start), fromNull(end)
		s.Created, s.ObservedAt = s.Created.UTC(), s.ObservedAt.UTC()
		return s, nil
	})
}

func invoices(ctx context.Context, q querier, accountID uuid.UUID) ([]mirror.Invoice, error) {
	rows, err := q.Query(ctx, `SELECT invoice_id, account_id, subscription_id, number, status, total, currency,
			vat_rate::float8, reverse_charge, hosted_url, pdf_url, created_at, observed_at
		FROM invoices WHERE account_id = $1 ORDER BY created_at DESC, invoice_id DESC`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: read invoices: %w", err)
	}
	invs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (mirror.Invoice, error) {
		var inv mirror.Invoice
		if err := r.Scan(&inv.ID, &inv.AccountID, &inv.SubscriptionID, &inv.Number, &inv.Status, &inv.Total, &inv.Currency,
			&inv.VATRate, &inv.ReverseCharge, &inv.HostedURL, &inv.PDFURL, &inv.Created, &inv.ObservedAt); err != nil {
			return inv, fmt.Errorf("store: read invoice: %w", err)
		}
		inv.Created, inv.ObservedAt = inv.Created.UTC(), inv.ObservedAt.UTC()
		inv.CreditNotes = []mirror.CreditNote{}
		return inv, nil
	})
	if err != nil || len(invs) == 0 {
		return invs, err
	}
	rows, err = q.Query(ctx, `SELECT credit_note_id, invoice_id, account_id, number, total, created_at
		FROM credit_notes WHERE account_id = $1 ORDER BY created_at, credit_note_id`, accountID)
	if err != nil {
		return nil, fmt.Errorf("store: read credit notes: %w", err)
	}
	notes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (mirror.CreditNote, error) {
		var cn mirror.CreditNote
		err := r.Scan(&cn.ID, &cn.InvoiceID, &cn.AccountID, &cn.Number, &cn.Total, &cn.Created)
		cn.Created = cn.Created.UTC()
		return cn, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: read credit note: %w", err)
	}
	byID := map[string]int{}
	for i, inv := range invs {
		byID[inv.ID] = i
	}
	for _, cn := range notes {
		if i, ok := byID[cn.InvoiceID]; ok {
			invs[i].CreditNotes = append(invs[i].CreditNotes, cn)
		}
	}
	return invs, nil
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fromNull(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}
