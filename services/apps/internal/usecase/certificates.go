package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/apps/internal/domains"
)

// CertificateReport is a zone's word on one custom hostname's certificate.
type CertificateReport struct {
	AppID, Hostname string
	// Zone is the zone that reported; a report from a zone other than the app's changes
	// nothing.
	Zone        string
	Certificate domains.Certificate
	At          time.Time // the zone's clock
}

// CertificateChanged keeps the report on the domain record and, when the certificate moves
// into failed, publishes apps.domain.certificate_failed so identity mails the owner once
// (domains.MailsOwner): the edge's retries that fail again are not news.
func CertificateChanged(ctx context.Context, tx Tx, r CertificateReport) error {
	ch, saved, err := tx.SaveCertificate(ctx, r.AppID, r.Zone, r.Hostname, r.Certificate, r.At)
	if err != nil || !saved || !domains.MailsOwner(ch.Previous, r.Certificate.Status) {
		return err
	}
	return tx.Publish(ctx, appsbus.KeyDomainCertificateFailed, &appsv1.DomainCertificateFailed{
		AppId: r.AppID, AccountId: ch.AccountID, Slug: ch.Slug, Hostname: r.Hostname, FailedAt: timestamppb.New(r.At),
	})
}
