package e2e

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/tests/e2e/harness"
)

// setPlans moves accounts to plan as billing's set-plan would, at the speed of one
// transaction instead of a process per account (thousands at 10,000 apps): the first account
// through the operator command itself, whose billing.account.plan_changed (billing's own
// words: the plan's limits from its catalog) is then written again for each other account,
// with that account's id and next version, into billing's outbox in the same transaction as
// its plan's row, exactly what SetPlan commits. Billing's relay publishes them, and every
// plan copy (identity, apps, deploys, logs, databases) follows the real way.
func setPlans(ctx context.Context, s *harness.Stack, w *scaleWorld, st *cpState, accounts []int, plan string) error {
	if len(accounts) == 0 {
		return nil
	}
	first := w.accounts[accounts[0]]
	if out, err := s.Command("billing", "set-plan", "-account", first.Email, "-plan", plan); err != nil {
		return fmt.Errorf("set-plan %s: %w: %s", first.Email, err, out)
	}
	template, typ, err := planChangedOf(ctx, st, first.ID)
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(accounts)-1)
	for _, a := range accounts[1:] {
		ids = append(ids, w.accounts[a].ID)
	}
	if len(ids) == 0 {
		return nil
	}
	// As set-plan waits for an account identity has just made to reach billing.
	if err := awaitCount(ctx, st.db, len(ids), time.Minute, "billing's accounts",
		`SELECT count(*) FROM billing.account_plans WHERE account_id = ANY($1::uuid[])`, ids); err != nil {
		return err
	}
	tx, err := st.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	now := time.Now().UTC().Truncate(time.Microsecond)
	rows, err := tx.Query(ctx, `
		UPDATE billing.account_plans SET plan = $2, version = version + 1, updated_at = $3
		WHERE account_id = ANY($1::uuid[]) AND plan <> $2 AND deleted_at IS NULL
		RETURNING account_id::text, version`, ids, plan, now)
	if err != nil {
		return fmt.Errorf("billing's plans: %w", err)
	}
	var (
		msgIDs []string
		bodies [][]byte
	)
	for rows.Next() {
		var id string
		var version int64
		if err := rows.Scan(&id, &version); err != nil {
			return err
		}
		ev := proto.Clone(template).(*billingv1.AccountPlanChanged)
		ev.AccountId, ev.Version, ev.ChangedAt = id, version, timestamppb.New(now)
		body, err := proto.Marshal(ev)
		if err != nil {
			return err
		}
		msgIDs, bodies = append(msgIDs, uuid.NewString()), append(bodies, body)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("billing's plans: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO billing.outbox (id, routing_key, type, body)
		SELECT u.id, $2, $3, u.body FROM unnest($1::uuid[], $4::bytea[]) u(id, body)`,
		msgIDs, billingbus.KeyPlanChanged, typ, bodies); err != nil {
		return fmt.Errorf("billing's outbox: %w", err)
	}
	return tx.Commit(ctx)
}

// planChangedOf is the newest billing.account.plan_changed billing wrote for the account,
// and its type as the outbox keeps it.
func planChangedOf(ctx context.Context, st *cpState, accountID string) (*billingv1.AccountPlanChanged, string, error) {
	rows, err := st.db.Query(ctx, `SELECT type, body FROM billing.outbox WHERE routing_key = $1 ORDER BY seq DESC LIMIT 50`, billingbus.KeyPlanChanged)
	if err != nil {
		return nil, "", fmt.Errorf("billing's outbox: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ string
		var body []byte
		if err := rows.Scan(&typ, &body); err != nil {
			return nil, "", err
		}
		var ev billingv1.AccountPlanChanged
		if err := proto.Unmarshal(body, &ev); err != nil {
			return nil, "", fmt.Errorf("billing's outbox: %w", err)
		}
		if ev.GetAccountId() == accountID {
			return &ev, typ, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, "", err
	}
	return nil, "", fmt.Errorf("billing's outbox holds no plan change of %s", accountID)
}
