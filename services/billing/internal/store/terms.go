package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/usecase"
)

// TermsCandidates are the subscriptions still charging (not canceled or expired) whose
// customer's country is known, with the terms applied to each last, oldest first.
func (s *Store) TermsCandidates(ctx context.Context, limit int) ([]usecase.TermsCandidate, error) {
	rows, err := s.pool.Query(ctx, `SELECT s.subscription_id, s.customer_id, s.plan, s.interval, coalesce(s.vat_terms, ''),
			c.country, c.vat_id, c.business, c.vat_id_valid
		FROM subscriptions s JOIN customers c USING (account_id)
		WHERE s.status NOT IN ('canceled', 'incomplete_expired') AND c.country <> ''
		ORDER BY s.created_at, s.subscription_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("store: read terms candidates: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (usecase.TermsCandidate, error) {
		var c usecase.TermsCandidate
		var plan, interval string
		err := r.Scan(&c.SubscriptionID, &c.CustomerID, &plan, &interval, &c.Applied,
			&c.Customer.Country, &c.Customer.VATID, &c.Customer.Business, &c.Customer.VATIDValid)
		c.Plan, c.Interval = catalog.Name(plan), catalog.Interval(interval)
		return c, err
	})
}

// SetAppliedTerms records the terms applied at the provider to a subscription.
func (s *Store) SetAppliedTerms(ctx context.Context, subscriptionID, key string) error {
	if _, err := s.pool.Exec(ctx, `UPDATE subscriptions SET vat_terms = $2 WHERE subscription_id = $1`, subscriptionID, key); err != nil {
		return fmt.Errorf("store: record applied terms: %w", err)
	}
	return nil
}
