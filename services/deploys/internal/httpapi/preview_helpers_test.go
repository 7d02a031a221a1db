package httpapi_test

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// previewPlan allows two previews of up to a week.
var previewPlan = usecase.Plan{Name: "songbird", ConcurrentDeploys: 5, UploadBytes: 64 << 10, BuildMinutes: 20, MinScale: 1, CPU: 1,
	Previews: 2, PreviewMaxTTLHours: 168}

// postPreview posts a JSON preview of an image to the app slug with extra members.
func (e *env) postPreview(account, slug, members string) (int, map[string]any) {
	e.t.Helper()
	body := `{"image":"` + imageRef() + `"`
	if members != "" {
		body += "," + members
	}
	body += "}"
	status, out, _ := e.postJSON(account, "/api/apps/"+slug+"/previews", body)
	return status, out
}

// mustPreview creates a preview and fails the test unless the answer is want.
func (e *env) mustPreview(slug, members string, want int) map[string]any {
	e.t.Helper()
	status, out := e.postPreview(e.account, slug, members)
	if status != want {
		e.t.Fatalf("preview %s: %d %v, want %d", members, status, out, want)
	}
	return out
}

// commands are the zone commands of one kind in the outbox, decoded, oldest first.
func commands[M proto.Message](e *env, command string, fresh func() M) []M {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`,
		zonebus.CommandKey("local", command))
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []M
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			e.t.Fatal(err)
		}
		m := fresh()
		if err := proto.Unmarshal(b, m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (e *env) starts() []*zonev1.StartRevision {
	return commands(e, zonebus.CommandDeploy, func() *zonev1.StartRevision { return &zonev1.StartRevision{} })
}

func (e *env) removals() []*zonev1.RemovePreview {
	return commands(e, zonebus.CommandPreviewRemove, func() *zonev1.RemovePreview { return &zonev1.RemovePreview{} })
}

// getPreview reads a preview by id or name.
func (e *env) getPreview(slug, ref string) (int, map[string]any) {
	e.t.Helper()
	status, out, _ := e.request(e.account, "GET", "/api/apps/"+slug+"/previews/"+ref, "", nil, 0)
	return status, out
}

// liveDeploy deploys an image to the service app slug and puts it live.
func (e *env) liveImage(slug string) string {
	e.t.Helper()
	status, body, _ := e.postJSON(e.account, "/api/apps/"+slug+"/deploys", `{"image":"`+imageRef()+`"}`)
	if status != http.StatusCreated {
		e.t.Fatalf("deploy: %d %v", status, body)
	}
	id := body["id"].(string)
	e.goLive(id)
	return id
}

func (e *env) keyCount(key string) int {
	n := 0
	for _, k := range e.outboxKeys() {
		if k == key {
			n++
		}
	}
	return n
}

func hasPrefix(v any, prefix string) bool {
	s, _ := v.(string)
	return strings.HasPrefix(s, prefix)
}
