package busapi

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"tori.dev/contract/names"
	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/identity/internal/usecase"
)

// HostnamesQueue is identity's own durable queue for the apps service's hostname warnings.
const HostnamesQueue = "identity.hostnames"

// HostnameMailConsumer mails an account's owner when apps reports an active hostname's TXT
// record missing.
type HostnameMailConsumer struct {
	Repo    func(tx bus.Tx) usecase.Repo
	Service *usecase.Service
	Log     *slog.Logger
}

// Subscription is the durable subscription bus.Conn.Consume runs.
func (c HostnameMailConsumer) Subscription() bus.Subscription {
	return bus.Subscription{Queue: HostnamesQueue, Keys: []string{appsbus.KeyDomainVerificationFailing}, Handle: c.Handle}
}

// Handle validates the event and mails. The hostname, slug and record go into the mail's
// text, so only the shapes the contract gives them pass (names): anything else (a newline,
// say) would be someone else's words in a mail from Tori. A malformed event will never
// become valid, so it is dead-lettered at once.
func (c HostnameMailConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var ev appsv1.DomainVerificationFailing
	if err := d.Decode(&ev); err != nil {
		return bus.Permanent(fmt.Errorf("decode verification_failing: %w", err))
	}
	h := ev.GetHostname()
	if uuid.Validate(ev.GetAccountId()) != nil || !names.ValidHostname(h) ||
		!names.ValidSlug(ev.GetSlug()) || ev.GetRecordName() != names.ChallengePrefix+h ||
		!names.ValidVerificationValue(ev.GetRecordValue()) || ev.GetMissingSince() == nil || ev.GetDeactivateAt() == nil {
		return bus.Permanent(fmt.Errorf("verification_failing %s: malformed", d.ID))
	}
	return c.Service.MailHostnameFailing(ctx, c.Repo(tx), usecase.HostnameFailing{
		AccountID: ev.GetAccountId(), Slug: ev.GetSlug(), Hostname: h,
		RecordName: ev.GetRecordName(), RecordValue: ev.GetRecordValue(),
		MissingSince: ev.GetMissingSince().AsTime(), DeactivateAt: ev.GetDeactivateAt().AsTime(),
	})
}
