package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/tests/e2e/harness"
)

// Someone on the broker who collects the sealed snapshot of a real deploy still cannot open
// it: the apps service opens it only for the zone that hosts the deploy, as the deploys
// service knows it. The spy here binds with the admin user, which the services' users could
// not do on a broker with topic permissions (pkg/bus TestBrokerUsersStayInTheirLane).
func TestEnvOpensOnlyForTheHostingZone(t *testing.T) {
	s := defaultStack(t)
	a := s.NewAccount(t, "envopen")
	slug := createApp(t, s, a.Token, "service")
	if r := s.Do(t, harness.Request{Method: http.MethodPut, Path: "/api/apps/" + slug + "/env", Token: a.Token, Body: map[string]string{"key": "SECRET", "value": "only-for-the-zone"}}); r.Status != http.StatusCreated {
		t.Fatalf("env: %d %s", r.Status, r.Body)
	}
	ns := s.Env["BUS_NAMESPACE"]
	zone := s.Env["ZONE_ID"]
	if zone == "" {
		zone = "local"
	}

	admin, err := amqp.Dial(s.Env["AMQP_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	spy, err := admin.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := spy.QueueDeclare("", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := spy.QueueBind(q.Name, zonebus.CommandKey(zone, zonebus.CommandDeploy), ns+"tori.events", false, nil); err != nil {
		t.Fatal(err)
	}

	manifest, _ := json.Marshal(map[string]string{"start": "node server.js"})
	r := deploySource(t, s, a.Token, slug, sourceTarball(t, map[string]string{"tori.json": string(manifest), "server.js": nodeServer, "version.json": `{"v":"1"}`}), "")
	if r.Status != http.StatusCreated {
		t.Fatalf("deploy: %d %s", r.Status, r.Body)
	}
	deployID := r.Map(t)["id"].(string)
	waitStatus(t, s, a.Token, slug, deployID, "live")

	var start zonev1.StartRevision
	harness.Eventually(t, 10*time.Second, "the spied deploy command", func() bool {
		d, ok, err := spy.Get(q.Name, true)
		return err == nil && ok && proto.Unmarshal(d.Body, &start) == nil && start.DeployId == deployID
	})
	if len(start.EnvSealed) == 0 {
		t.Fatal("the deploy command carries no sealed snapshot")
	}

	cfg := testinfra.BusConfig(t)
	cfg.Namespace = ns
	req := &appsv1.EnvOpenRequest{AppId: start.AppId, DeployId: start.EnvDeployId, Sealed: start.EnvSealed, KeyId: start.EnvKeyId, RevisionDeployId: start.DeployId}
	open := func(principal string) (map[string]string, string) {
		t.Helper()
		conn := testinfra.DialBusAs(t, cfg, principal, nil)
		var reply appsv1.EnvOpenReply
		err := conn.Request(context.Background(), appsbus.QueueEnvOpen, req, &reply)
		var re *bus.RemoteError
		if errors.As(err, &re) {
			return nil, re.Code
		}
		if err != nil {
			t.Fatalf("as %s: %v", principal, err)
		}
		return reply.Vars, ""
	}
	other := "other"
	if zone == other {
		other = "eu-1"
	}
	for _, principal := range []string{bus.ZonePrincipal(other), bus.PrincipalDeploys, bus.PrincipalLogs} {
		if vars, code := open(principal); code != "forbidden" {
			t.Errorf("%s opened the snapshot: %v (refusal %q)", principal, vars != nil, code)
		}
	}
	// The hosting zone does open it: the snapshot and the question were real.
	if vars, code := open(bus.ZonePrincipal(zone)); code != "" || vars["SECRET"] != "only-for-the-zone" {
		t.Fatalf("the hosting zone: refusal %q, %d variables", code, len(vars))
	}
}
