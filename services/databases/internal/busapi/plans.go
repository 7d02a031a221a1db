package busapi

import (
	"context"
	"fmt"

	"tori.dev/pkg/bus"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/databases/internal/database"
	"tori.dev/services/databases/internal/usecase"
)

// QueuePlans is this service's durable queue of plan changes.
const QueuePlans = "databases.plans"

// PlanChanges consumes billing.account.plan_changed: an account's databases follow its plan.
func PlanChanges(txs Transactions, dbs *usecase.Databases) bus.Subscription {
	return bus.Subscription{
		Queue: QueuePlans,
		Keys:  []string{billingbus.KeyPlanChanged},
		Handle: func(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
			var m billingv1.AccountPlanChanged
			if err := d.Decode(&m); err != nil {
				return bus.Permanent(fmt.Errorf("busapi: decode AccountPlanChanged: %w", err))
			}
			l := database.Limits{
				Connections: int(m.GetLimits().GetDatabaseConnections()),
				MaxBytes:    m.GetLimits().GetDatabaseBytes(),
				Version:     m.GetVersion(),
			}
			if m.GetAccountId() == "" || l.Connections < 1 || l.MaxBytes < 1 {
				return bus.Permanent(fmt.Errorf("busapi: a plan change without an account or database limits"))
			}
			return dbs.PlanChanged(ctx, txs.Bind(tx), m.GetAccountId(), l)
		},
	}
}
