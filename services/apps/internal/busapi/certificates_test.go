package busapi_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/apps/internal/busapi"
)

// A zone reports for itself only, and a report that can never make sense is dead-lettered
// before anything is read or written.
func TestCertificateReportsRefusedBeforeTheStore(t *testing.T) {
	good := func() *zonev1.CertificateChanged {
		return &zonev1.CertificateChanged{AppId: uuid.NewString(), Hostname: "shop.example.net", Zone: "eu-1",
			Status: zonev1.CertificateStatus_CERTIFICATE_STATUS_ISSUED, At: timestamppb.Now()}
	}
	c := busapi.Consumers{} // no store: each case must be refused before it
	for name, tc := range map[string]struct {
		publisher string
		mutate    func(*zonev1.CertificateChanged)
	}{
		"another zone's name":  {"zone.us-1", func(*zonev1.CertificateChanged) {}},
		"not a zone":           {"deploys", func(*zonev1.CertificateChanged) {}},
		"no status":            {"zone.eu-1", func(m *zonev1.CertificateChanged) { m.Status = 0 }},
		"no time":              {"zone.eu-1", func(m *zonev1.CertificateChanged) { m.At = nil }},
		"no hostname":          {"zone.eu-1", func(m *zonev1.CertificateChanged) { m.Hostname = "" }},
		"no zone":              {"zone.eu-1", func(m *zonev1.CertificateChanged) { m.Zone = "" }},
		"an app id not a uuid": {"zone.eu-1", func(m *zonev1.CertificateChanged) { m.AppId = "../x" }},
	} {
		m := good()
		tc.mutate(m)
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: zonebus.KeyCertificateChanged, Body: body, Attempt: 1, Publisher: tc.publisher}
		if err := c.HandleCertificate(context.Background(), bus.Tx{}, d); !bus.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
}
