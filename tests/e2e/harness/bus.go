package harness

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
	"tori.dev/pkg/testinfra"
)

// PublishEvent puts one event on the stack's events exchange, as a service's outbox relay or
// a zone agent would: persistent, with a message id and the body's type, published by the
// key's owner (its broker user and user_id), so the services accept it as theirs.
func (s *Stack) PublishEvent(t testing.TB, routingKey string, msg proto.Message) {
	t.Helper()
	body, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	owner, _, _ := strings.Cut(routingKey, ".")
	if owner == "zone" {
		zone := s.Env["ZONE_ID"]
		if zone == "" {
			zone = "local"
		}
		owner = bus.ZonePrincipal(zone)
	}
	conn, err := amqp.Dial(testinfra.ServiceAMQPURL(t, owner))
	if err != nil {
		t.Fatalf("harness: dial broker: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Confirm(false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, s.Env["BUS_NAMESPACE"]+"tori.events", routingKey, true, false, amqp.Publishing{
		MessageId:    uuid.NewString(),
		UserId:       bus.UserName(brokeradmin.TestPrefix, owner),
		Type:         string(msg.ProtoReflect().Descriptor().FullName()),
		DeliveryMode: amqp.Persistent,
		Body:         body,
	})
	if err != nil {
		t.Fatalf("harness: publish %s: %v", routingKey, err)
	}
	if ok, err := conf.WaitContext(ctx); err != nil || !ok {
		t.Fatalf("harness: publish %s not confirmed: %v", routingKey, err)
	}
}
