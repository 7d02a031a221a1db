package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
	"tori.dev/pkg/testinfra"
)

// dialAs opens a raw channel as principal's test user (made once per run, not here).
func dialAs(t *testing.T, principal string) *amqp.Channel {
	t.Helper()
	conn, err := amqp.Dial(testinfra.ServiceAMQPURL(t, principal))
	if err != nil {
		t.Fatalf("dial as %s: %v", principal, err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func isAccessRefused(err error) bool {
	var ae *amqp.Error
	return errors.As(err, &ae) && ae.Code == amqp.AccessRefused
}

// One service's broker user cannot publish another's routing key on the events exchange,
// nor consume another's queue; its own keys and queues work.
func TestBrokerUsersStayInTheirLane(t *testing.T) {
	ns := brokeradmin.TestTopicNamespace // the test namespace with topic permissions
	exchange := ns + "tori.events"
	admin, err := amqp.Dial(testinfra.AMQPURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ach, err := admin.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if err := ach.ExchangeDeclare(exchange, amqp.ExchangeTopic, true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	billingQueue := ns + "billing.perm-" + testinfra.Namespace(t)
	if _, err := ach.QueueDeclare(billingQueue, false, true, false, false, nil); err != nil {
		t.Fatal(err)
	}

	publish := func(ch *amqp.Channel, key string) error {
		if err := ch.Confirm(false); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, amqp.Publishing{Body: []byte("x")})
		if err != nil {
			return err
		}
		if _, err := dc.WaitContext(ctx); err != nil {
			return err
		}
		// A refused publish closes the channel asynchronously; a round trip makes it visible.
		_, err = ch.QueueDeclarePassive("amq.rabbitmq.reply-to", false, false, false, false, nil)
		if ch.IsClosed() {
			return amqp.ErrClosed
		}
		return nil
	}

	t.Run("own key", func(t *testing.T) {
		if err := publish(dialAs(t, bus.PrincipalIdentity), "identity.account.created"); err != nil {
			t.Fatalf("identity publishing identity.account.created: %v", err)
		}
	})
	t.Run("another's key", func(t *testing.T) {
		ch := dialAs(t, bus.PrincipalIdentity)
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		err := publish(ch, "billing.account.plan_changed")
		select {
		case e := <-closed:
			if e == nil || e.Code != amqp.AccessRefused {
				t.Fatalf("identity publishing billing's key: channel closed with %v, want access refused", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("identity published billing.account.plan_changed (err %v)", err)
		}
	})
	t.Run("a zone cannot send commands", func(t *testing.T) {
		ch := dialAs(t, bus.ZonePrincipal("local"))
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		publish(ch, "zone.other.deploy")
		select {
		case e := <-closed:
			if e == nil || e.Code != amqp.AccessRefused {
				t.Fatalf("zone sending a deploy command: %v", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a zone published a deploy command")
		}
	})
	t.Run("another's queue", func(t *testing.T) {
		_, err := dialAs(t, bus.PrincipalIdentity).Consume(billingQueue, "", true, false, false, false, nil)
		if !isAccessRefused(err) {
			t.Fatalf("identity consuming billing's queue: %v, want access refused", err)
		}
	})
	t.Run("own queue", func(t *testing.T) {
		ch := dialAs(t, bus.PrincipalBilling)
		if _, err := ch.QueueDeclare(ns+"billing.own-"+testinfra.Namespace(t), false, true, false, false, nil); err != nil {
			t.Fatalf("billing declaring its own queue: %v", err)
		}
	})
	// Binding: a queue may follow every service's events, but only the zone itself may bind
	// to its commands, and no one with a key that starts with a wildcard.
	bind := func(principal, key string) error {
		ch := dialAs(t, principal)
		queue := ns + ownQueuePrefix(principal) + ".bind-" + testinfra.Namespace(t)
		if _, err := ch.QueueDeclare(queue, false, true, false, false, nil); err != nil {
			t.Fatalf("%s declaring its own queue: %v", principal, err)
		}
		return ch.QueueBind(queue, key, exchange, false, nil)
	}
	for _, c := range []struct {
		principal, key string
		ok             bool
	}{
		{bus.PrincipalApps, "billing.account.*", true},
		{bus.PrincipalApps, "zone.deploy.progressed", true},
		{bus.ZonePrincipal("local"), "zone.local.deploy", true},
		{bus.ZonePrincipal("local"), "apps.app.deleted", true},
		{bus.PrincipalLogs, "zone.local.deploy", false},
		{bus.PrincipalLogs, "zone.*.deploy", false},
		{bus.PrincipalLogs, "#", false},
		{bus.ZonePrincipal("other"), "zone.local.deploy", false},
		{bus.ZonePrincipal("local"), "zone.local.#", false},
	} {
		t.Run("bind "+c.principal+" to "+c.key, func(t *testing.T) {
			err := bind(c.principal, c.key)
			if c.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !c.ok && !isAccessRefused(err) {
				t.Fatalf("%v, want access refused", err)
			}
		})
	}
	t.Run("the dead-letter queue", func(t *testing.T) {
		_, err := dialAs(t, bus.PrincipalApps).Consume(ns+"tori.dead-letter", "", true, false, false, false, nil)
		if !isAccessRefused(err) {
			t.Fatalf("apps reading the dead-letter queue: %v, want access refused", err)
		}
	})
}

// ownQueuePrefix is the name a principal's queues start with.
func ownQueuePrefix(principal string) string {
	if zone, ok := bus.ZoneOf(principal); ok {
		return "zoneagent." + zone
	}
	return principal
}
