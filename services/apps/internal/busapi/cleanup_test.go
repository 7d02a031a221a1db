package busapi_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	"tori.dev/services/apps/internal/apptest"
	"tori.dev/services/apps/internal/busapi"
)

// The cleanup consumer binds each awaited service's key by name, and a confirmation speaks
// only for the service whose key carries it.
func TestCleanupConfirmationsSpeakForTheirPublisher(t *testing.T) {
	c := busapi.Consumers{CleanupFrom: []string{"logs", "deploys"}}
	if keys := c.Cleanup().Keys; len(keys) != 2 || keys[0] != "logs.app.cleaned" || keys[1] != "deploys.app.cleaned" {
		t.Fatalf("cleanup keys %v", keys)
	}
	if _, ok := (busapi.Consumers{}).Subscriptions()["cleanup consumer"]; ok {
		t.Fatal("a cleanup consumer with no service to await")
	}

	s := apptest.New(t, apptest.Options{})
	body, _ := proto.Marshal(&appsv1.AppCleanupConfirmed{AppId: uuid.NewString(), Service: "deploys"})
	err := s.Consumers.HandleCleanupConfirmed(context.Background(), bus.Tx{}, bus.Delivery{ID: uuid.NewString(), RoutingKey: "logs.app.cleaned", Body: body})
	if !bus.IsPermanent(err) {
		t.Fatalf("logs confirming for deploys: %v, want a permanent refusal", err)
	}
}
