package main

import (
	"os"
	"path/filepath"
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

// A command whose ids are not UUIDs is dead-lettered before anything uses them: the ids are
// joined into the zone's paths, so "../../.." would otherwise reach the host's tree as root.
// And a command from anyone but the deploys service is dead-lettered too.
func TestUntrustworthyCommandsAreDeadLetteredWithoutTouchingFiles(t *testing.T) {
	z := startZone(t)
	ns := z.Env["BUS_NAMESPACE"]
	appsDir := z.Env["ZONE_APPS_DIR"]
	escape := "escape-" + uuid.NewString()[:8]

	deployKey := zonebus.CommandKey("local", zonebus.CommandDeploy)
	publishAs(t, ns, bus.PrincipalDeploys, deployKey, &zonev1.StartRevision{
		DeployId: uuid.NewString(), AppId: "../../../" + escape, Slug: "x", Kind: "static", ArtifactKey: "objects/x.tar.gz"})
	publishAs(t, ns, bus.PrincipalDeploys, deployKey, &zonev1.StartRevision{
		DeployId: "../" + escape, AppId: uuid.NewString(), Slug: "x", Kind: "static", ArtifactKey: "objects/x.tar.gz"})
	publishAs(t, ns, bus.PrincipalDeploys, zonebus.CommandKey("local", zonebus.CommandDiscard), &zonev1.DiscardRevision{})
	// A valid command, but from a zone, which never sends commands.
	publishAs(t, ns, bus.ZonePrincipal("other"), deployKey, &zonev1.StartRevision{
		DeployId: uuid.NewString(), AppId: uuid.NewString(), Slug: "x", Kind: "static", ArtifactKey: "objects/x.tar.gz"})

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
	testinfra.Eventually(t, 20*time.Second, "four commands dead-lettered", func() bool {
		q, err := ch.QueueDeclarePassive(dlq, false, false, false, false, nil)
		return err == nil && q.Messages == 4
	})
	var reasons []string
	for range 4 {
		d, ok, err := ch.Get(dlq, true)
		if err != nil || !ok {
			t.Fatalf("get dead letter: %v %v", ok, err)
		}
		r, _ := d.Headers["x-tori-reason"].(string)
		reasons = append(reasons, r)
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"app_id is not a UUID", "deploy_id is not a UUID", "a required id is missing", `publisher "zone.other"`} {
		if !strings.Contains(all, want) {
			t.Errorf("no dead letter says %q; reasons:\n%s", want, all)
		}
	}
	// Nothing was made anywhere the ids point.
	for _, dir := range []string{appsDir, z.Env["DATA_DIR"], filepath.Dir(appsDir), filepath.Dir(filepath.Dir(appsDir)), filepath.Dir(filepath.Dir(filepath.Dir(appsDir)))} {
		if _, err := os.Stat(filepath.Join(dir, escape)); !os.IsNotExist(err) {
			t.Errorf("%s/%s exists (%v)", dir, escape, err)
		}
	}
	entries, err := os.ReadDir(appsDir)
	if err != nil || len(entries) != 0 {
		t.Errorf("the apps folder holds %d entries (%v)", len(entries), err)
	}
}
