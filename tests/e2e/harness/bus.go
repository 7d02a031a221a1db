package harness

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"
)

// PublishEvent puts one event on the stack's events exchange, as a service's outbox relay or
// a zone agent would: persistent, with a message id and the body's type.
func (s *Stack) PublishEvent(t testing.TB, routingKey string, msg proto.Message) {
	t.Helper()
	body, err := proto.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqp.Dial(s.Env["AMQP_URL"])
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
