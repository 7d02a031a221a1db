package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	amqp "github.com/rabbitmq/amqp091-go"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
)

func TestReplayReadsConfigFromEnvironment(t *testing.T) {
	url := testinfra.AMQPURL(t)
	ns := testinfra.Namespace(t) + "."
	t.Setenv("OPERATOR_AMQP_URL", testinfra.ServiceAMQPURL(t, bus.PrincipalOperator))
	t.Setenv("BUS_NAMESPACE", ns)
	t.Setenv("BUS_QUEUE_TYPE", "classic")
	t.Setenv("BUS_QUEUE_EXPIRES", "1m")
	t.Cleanup(func() {
		if ac, err := amqp.Dial(url); err == nil {
			if ch, err := ac.Channel(); err == nil {
				ch.ExchangeDelete(ns+"tori.events", false, false)
				ch.ExchangeDelete(ns+"tori.dlx", false, false)
			}
			ac.Close()
		}
	})
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"replay", "-max", "5"}, &out, &errOut); err != nil {
		t.Fatalf("replay: %v\n%s", err, errOut.String())
	}
	if got := out.String(); got != "replayed 0 message(s)\n" {
		t.Fatalf("output %q", got)
	}
}

func TestUnknownCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"frobnicate"}, &out, &errOut)
	if err == nil || !strings.Contains(errOut.String(), "usage: busctl") {
		t.Fatalf("want usage and an error, got %v and %q", err, errOut.String())
	}
}
