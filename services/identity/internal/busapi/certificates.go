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

// CertificatesQueue is identity's own durable queue for failed certificates of custom
// hostnames.
const CertificatesQueue = "identity.certificates"

// CertificateMailConsumer mails an account's owner when apps reports that a custom
// hostname's certificate could not be obtained.
type CertificateMailConsumer struct {
	Repo    func(tx bus.Tx) usecase.Repo
	Service *usecase.Service
	Log     *slog.Logger
}

// Subscription is the durable subscription bus.Conn.Consume runs.
func (c CertificateMailConsumer) Subscription() bus.Subscription {
	return bus.Subscription{Queue: CertificatesQueue, Keys: []string{appsbus.KeyDomainCertificateFailed}, Handle: c.Handle}
}

// Handle validates the event (the hostname and slug go into the mail's text, so only their
// shapes pass) and mails. A malformed event is dead-lettered at once.
func (c CertificateMailConsumer) Handle(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var ev appsv1.DomainCertificateFailed
	if err := d.Decode(&ev); err != nil {
		return bus.Permanent(fmt.Errorf("decode certificate_failed: %w", err))
	}
	h := ev.GetHostname()
	if uuid.Validate(ev.GetAccountId()) != nil || !names.ValidHostname(h) ||
		!names.ValidSlug(ev.GetSlug()) || ev.GetFailedAt() == nil {
		return bus.Permanent(fmt.Errorf("certificate_failed %s: malformed", d.ID))
	}
	return c.Service.MailCertificateFailed(ctx, c.Repo(tx), usecase.CertificateFailed{
		AccountID: ev.GetAccountId(), Slug: ev.GetSlug(), Hostname: h, FailedAt: ev.GetFailedAt().AsTime(),
	})
}
