package accessgate

import (
	"context"

	"github.com/gofiber/fiber/v2"
	"github.com/jackc/pgx/v5"

	"tori.dev/contract/access"
	"tori.dev/pkg/pgstore"
	auditv1 "tori.dev/proto/gen/tori/audit/v1"
	auditbus "tori.dev/proto/tori/audit/v1"
)

// Deny records a refusal a use case decided after Check let the request through (an admin
// changing an owner's role: the rule needs the target's role, which only the use case reads)
// and returns the 403 to answer. The request's entry, still pending because its change never
// committed, is written as denied in a transaction of its own.
func (g *Gate) Deny(c *fiber.Ctx, d *access.Denied) error {
	ctx := c.UserContext()
	if e, ok := ctx.Value(entryKey{}).(*auditv1.EntryRecorded); ok {
		e.Outcome = auditbus.OutcomeDenied
		e.Metadata["code"] = d.Code
		e.Metadata["required"] = d.Required
		// The pending write (WithPending in Check) goes into the first transaction committed
		// under ctx: this one.
		err := pgstore.InTx(context.WithoutCancel(ctx), g.db, func(pgx.Tx) error { return nil })
		if err != nil {
			g.log.ErrorContext(ctx, "audit entry of a refusal lost", "action", e.Action, "err", err.Error())
		}
	}
	return deniedError(d)
}
