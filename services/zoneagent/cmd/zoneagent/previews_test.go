package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
)

// RemovePreview reaches the zone on zone.<zone>.preview_remove: the preview's host (under
// the default PREVIEWS_DOMAIN, preview.<APPS_DOMAIN>, which the edge process reads too)
// answers 410 with noindex from the edge process; a command whose preview id is not one is
// dead-lettered.
func TestRemovePreviewOverTheBus(t *testing.T) {
	z := startZone(t)
	ns := z.Env["BUS_NAMESPACE"]
	key := zonebus.CommandKey("local", zonebus.CommandPreviewRemove)
	publishAs(t, ns, bus.PrincipalDeploys, key, &zonev1.RemovePreview{AppId: uuid.NewString(), PreviewId: "../x", Reason: "deleted"})
	publishAs(t, ns, bus.PrincipalDeploys, key, &zonev1.RemovePreview{AppId: uuid.NewString(), PreviewId: "abc123", Reason: "deleted"})

	admin, err := amqp.Dial(testinfra.AMQPURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ch, err := admin.Channel()
	if err != nil {
		t.Fatal(err)
	}
	dlq := ns + "tori.dead-letter"
	testinfra.Eventually(t, 20*time.Second, "the malformed remove dead-lettered", func() bool {
		q, err := ch.QueueDeclarePassive(dlq, false, false, false, false, nil)
		return err == nil && q.Messages >= 1
	})
	d, ok, err := ch.Get(dlq, true)
	if err != nil || !ok {
		t.Fatalf("get dead letter: %v %v", ok, err)
	}
	if r, _ := d.Headers["x-tori-reason"].(string); !strings.Contains(r, "not a preview id") {
		t.Fatalf("dead letter reason %q", r)
	}

	edge := "http://" + z.Env["EDGE_ADDR"] + "/"
	var res *http.Response
	testinfra.Eventually(t, 20*time.Second, "the removed preview's host answering 410", func() bool {
		req, _ := http.NewRequest("GET", edge, nil)
		req.Host = "shop-abc123.preview.apps.test"
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			return false
		}
		r.Body.Close()
		res = r
		return r.StatusCode == http.StatusGone
	})
	if res.Header.Get("X-Robots-Tag") != "noindex" {
		t.Errorf("X-Robots-Tag %q on the removed preview", res.Header.Get("X-Robots-Tag"))
	}
	if status, _ := get(t, edge, "shop-zzz999.preview.apps.test"); status != http.StatusNotFound {
		t.Errorf("an unknown preview: %d, want 404", status)
	}
	if q, err := ch.QueueDeclarePassive(dlq, false, false, false, false, nil); err != nil || q.Messages != 0 {
		t.Errorf("more dead letters: %d %v", q.Messages, err)
	}
}
