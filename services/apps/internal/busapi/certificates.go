package busapi

import (
	"context"
	"fmt"
	"strings"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/usecase"
)

// QueueCertificates is the durable queue of the zones' certificate reports.
const QueueCertificates = "apps.certificates"

var certificateStatuses = map[zonev1.CertificateStatus]string{
	zonev1.CertificateStatus_CERTIFICATE_STATUS_PENDING: domains.CertificatePending,
	zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED:  domains.CertificateIssued,
	zonev1.CertificateStatus_CERTIFICATE_STATUS_FAILED:  domains.CertificateFailed,
}

// maxCertificateError bounds the reason kept (the zone bounds it too).
const maxCertificateError = 500

// Certificates keeps each custom hostname's certificate as its zone reports it.
func (c Consumers) Certificates() bus.Subscription {
	return bus.Subscription{Queue: QueueCertificates, Keys: []string{zonebus.KeyCertificateChanged}, Handle: c.HandleCertificate}
}

// HandleCertificate applies one report in tx; a report that will never make sense (no
// status, no time) is dead-lettered.
func (c Consumers) HandleCertificate(ctx context.Context, tx bus.Tx, d bus.Delivery) error {
	var m zonev1.CertificateChanged
	if err := d.Decode(&m); err != nil {
		return bus.Permanent(fmt.Errorf("decode %s: %w", d.RoutingKey, err))
	}
	status, ok := certificateStatuses[m.GetStatus()]
	if !ok || m.GetAt() == nil || m.GetAppId() == "" || m.GetHostname() == "" || m.GetZone() == "" {
		return bus.Permanent(fmt.Errorf("%s %s: malformed", d.RoutingKey, d.ID))
	}
	// A zone speaks for itself only: the report names the zone that sent it, and only the
	// app's own zone is heeded (usecase.CertificateChanged).
	if z, isZone := bus.ZoneOf(d.Publisher); d.Publisher != "" && (!isZone || z != m.GetZone()) {
		return bus.Permanent(fmt.Errorf("%s %s: zone %q reported by %q", d.RoutingKey, d.ID, m.GetZone(), d.Publisher))
	}
	cert := domains.Certificate{Status: status, LastError: strings.ToValidUTF8(m.GetLastError(), "")}
	if len(cert.LastError) > maxCertificateError {
		cert.LastError = strings.ToValidUTF8(cert.LastError[:maxCertificateError], "")
	}
	if m.GetExpiresAt() != nil {
		t := m.GetExpiresAt().AsTime()
		cert.ExpiresAt = &t
	}
	return usecase.CertificateChanged(ctx, c.Tx(tx), usecase.CertificateReport{
		AppID: m.GetAppId(), Zone: m.GetZone(), Hostname: strings.ToLower(m.GetHostname()), Certificate: cert, At: m.GetAt().AsTime(),
	})
}
