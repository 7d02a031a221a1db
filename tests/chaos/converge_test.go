//go:build chaos

package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/bus/brokeradmin"
	"tori.dev/pkg/testinfra"
	"tori.dev/tests/e2e/harness"
)

// report is what the convergence check counted. Losses are facts the API once confirmed and
// no longer shows; doubles are effects seen more often than their cause was sent.
type report struct {
	apps, deploys, envKeys, logLines int

	appsMissing, deploysMissing, envMissing, logsMissing int
	deploysOpen, inconsistent                            int
	deploysExtra, logsDuplicated, appsExtra              int
}

func (r report) losses() int {
	return r.appsMissing + r.deploysMissing + r.envMissing + r.logsMissing
}

func (r report) doubles() int { return r.deploysExtra + r.logsDuplicated + r.appsExtra }

func (r report) String() string {
	return fmt.Sprintf("apps %d (missing %d, extra %d); deploys %d (missing %d, extra %d, not terminal %d, "+
		"apps/deploys/edge disagree %d); env keys %d (missing %d); log lines %d (missing %d, duplicated %d)",
		r.apps, r.appsMissing, r.appsExtra, r.deploys, r.deploysMissing, r.deploysExtra, r.deploysOpen, r.inconsistent,
		r.envKeys, r.envMissing, r.logLines, r.logsMissing, r.logsDuplicated)
}

func (r report) settled() bool {
	return r.losses() == 0 && r.doubles() == 0 && r.deploysOpen == 0 && r.inconsistent == 0
}

// converge checks everything the load was told succeeded until it all holds or within is
// over; every five seconds, so the checks stay inside each operation's read limit.
func (l *load) converge(t *testing.T, within time.Duration) (bool, report) {
	deadline := time.Now().Add(within)
	for {
		r := l.check()
		if r.settled() {
			return true, r
		}
		if time.Now().After(deadline) {
			return false, r
		}
		t.Logf("not yet converged: %s", r)
		time.Sleep(5 * time.Second)
	}
}

func (l *load) getJSON(path string, v any) int {
	status, body, err := l.call(http.MethodGet, path, nil, "")
	if err != nil {
		return 0
	}
	if status == http.StatusOK {
		json.Unmarshal(body, v)
	}
	return status
}

func (l *load) check() report {
	l.mu.Lock()
	apps := append([]*loadApp(nil), l.apps...)
	l.mu.Unlock()
	var r report
	var listed []map[string]any
	l.getJSON("/api/apps", &listed)
	seen := map[string]int{}
	for _, a := range listed {
		seen[fmt.Sprint(a["id"])]++
	}
	r.apps = len(apps)
	r.appsExtra = max(0, len(listed)-len(apps))
	for _, a := range apps {
		if seen[a.id] != 1 {
			r.appsMissing++
			continue
		}
		l.checkDeploys(a, &r)
		l.checkEnv(a, &r)
		l.checkLogs(a, &r)
	}
	return r
}

func (l *load) checkDeploys(a *loadApp, r *report) {
	l.mu.Lock()
	want := make(map[string]string, len(a.deploys))
	for k, v := range a.deploys {
		want[k] = v
	}
	l.mu.Unlock()
	r.deploys += len(want)
	var list []map[string]any
	if l.getJSON("/api/apps/"+a.slug+"/deploys?limit=200", &list) != http.StatusOK {
		r.deploysMissing += len(want)
		return
	}
	r.deploysExtra += max(0, len(list)-len(want))
	live := ""
	got := map[string]bool{}
	for _, d := range list {
		id, st := fmt.Sprint(d["id"]), fmt.Sprint(d["status"])
		got[id] = true
		switch st {
		case "building", "releasing":
			r.deploysOpen++
		case "live":
			live = id
		}
	}
	for id := range want {
		if !got[id] {
			r.deploysMissing++
		}
	}
	var app map[string]any
	l.getJSON("/api/apps/"+a.slug, &app)
	current, _ := app["currentDeployId"].(string)
	if current != live {
		r.inconsistent++
		return
	}
	if live == "" {
		return
	}
	status, body := l.edge(a)
	if status != http.StatusOK || body != want[live] {
		r.inconsistent++
	}
}

// edge asks the app's own zone's edge for its site.
func (l *load) edge(a *loadApp) (int, string) {
	req, _ := http.NewRequest(http.MethodGet, l.s.Zone(a.region).EdgeURL(a.slug+".apps.localhost", "/"), nil)
	resp, err := l.edgeHTTP[a.region].Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (l *load) checkEnv(a *loadApp, r *report) {
	l.mu.Lock()
	keys := make([]string, 0, len(a.env))
	for k := range a.env {
		keys = append(keys, k)
	}
	l.mu.Unlock()
	r.envKeys += len(keys)
	var vars []map[string]any
	if l.getJSON("/api/apps/"+a.slug+"/env", &vars) != http.StatusOK {
		r.envMissing += len(keys)
		return
	}
	have := map[string]bool{}
	for _, v := range vars {
		have[fmt.Sprint(v["key"])] = true
	}
	for _, k := range keys {
		if !have[k] {
			r.envMissing++
		}
	}
}

func (l *load) checkLogs(a *loadApp, r *report) {
	l.mu.Lock()
	want := make(map[string]struct{}, len(a.logLines))
	for k := range a.logLines {
		want[k] = struct{}{}
	}
	l.mu.Unlock()
	r.logLines += len(want)
	now := time.Now().UTC()
	q := url.Values{"start": {now.Add(-time.Hour).Format(time.RFC3339)}, "end": {now.Add(time.Minute).Format(time.RFC3339)}, "limit": {"500"}}
	seen := map[string]int{}
	for {
		var page struct {
			Entries []map[string]any `json:"entries"`
			Next    *string          `json:"next"`
		}
		if l.getJSON("/api/apps/"+a.slug+"/logs?"+q.Encode(), &page) != http.StatusOK {
			r.logsMissing += len(want)
			return
		}
		for _, e := range page.Entries {
			seen[fmt.Sprint(e["message"])]++
		}
		if page.Next == nil {
			break
		}
		q.Set("cursor", *page.Next)
	}
	for m := range want {
		switch n := seen[m]; {
		case n == 0:
			r.logsMissing++
		case n > 1:
			r.logsDuplicated += n - 1
		}
	}
}

// publish puts one event on the stack's exchange as a zone's relay would, and reports
// whether the broker confirmed it.
// publisher is a broker user of the stack's, as the services know it.
type publisher struct {
	url  string // connects as that user
	user string // the user_id the broker vouches for
}

// zonePublisher is the stack's zone: its log batches are the only ones the logs service takes
// (a message names its publisher, and a batch from anyone else is refused).
func zonePublisher(t *testing.T, s *harness.Stack) publisher {
	zone := s.Env["ZONE_ID"]
	if zone == "" {
		zone = "local"
	}
	principal := bus.ZonePrincipal(zone)
	return publisher{url: testinfra.ServiceAMQPURL(t, principal), user: bus.UserName(brokeradmin.TestPrefix, principal)}
}

// publish sends one event as p, confirmed by the broker; an error while the broker is down.
func (p publisher) publish(s *harness.Stack, routingKey string, msg proto.Message) error {
	body, err := proto.Marshal(msg)
	if err != nil {
		return err
	}
	conn, err := amqp.Dial(p.url)
	if err != nil {
		return err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	if err := ch.Confirm(false); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conf, err := ch.PublishWithDeferredConfirmWithContext(ctx, s.Env["BUS_NAMESPACE"]+"tori.events", routingKey, true, false, amqp.Publishing{
		MessageId:    uuid.NewString(),
		UserId:       p.user,
		Type:         string(msg.ProtoReflect().Descriptor().FullName()),
		DeliveryMode: amqp.Persistent,
		Body:         body,
	})
	if err != nil {
		return err
	}
	if ok, err := conf.WaitContext(ctx); err != nil || !ok {
		return fmt.Errorf("not confirmed: %v", err)
	}
	return nil
}
