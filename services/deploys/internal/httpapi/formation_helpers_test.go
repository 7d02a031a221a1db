package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/deploys/internal/usecase"
)

// nestlingPlan is the smallest plan with its formation limits as DESIGN38 sets them.
var nestlingPlan = usecase.Plan{Name: "nestling", ConcurrentDeploys: 5, UploadBytes: 64 << 10, BuildMinutes: 10, MinScale: 0, CPU: 0.5,
	ProcessTypes: 2, InstancesPerProcess: 1, InstancesTotal: 2, CronJobs: 2, CronMinIntervalMinutes: 60, CronTimeoutSeconds: 900,
	InstanceMemoryBytes: 256 << 20}

// songbirdPlan allows more of everything.
var songbirdPlan = usecase.Plan{Name: "songbird", ConcurrentDeploys: 5, UploadBytes: 64 << 10, BuildMinutes: 20, MinScale: 1, CPU: 1,
	ProcessTypes: 4, InstancesPerProcess: 3, InstancesTotal: 8, CronJobs: 10, CronMinIntervalMinutes: 10, CronTimeoutSeconds: 3600,
	InstanceMemoryBytes: 512 << 20}

func imageRef() string { return "ghcr.io/a/b@sha256:" + digest() }

// deployImage starts an image deploy of slug with the given `processes` JSON ("" for none).
func (e *env) deployImage(slug, processes string) string {
	e.t.Helper()
	body := `{"image":"` + imageRef() + `","forceRestart":true`
	if processes != "" {
		body += `,"processes":` + processes
	}
	status, out, _ := e.postJSON(e.account, "/api/apps/"+slug+"/deploys", body+"}")
	if status != http.StatusCreated {
		e.t.Fatalf("image deploy: %d %v", status, out)
	}
	return out["id"].(string)
}

// readyWith reports the revision ready with the process types the zone found (name, command
// pairs), as the zone's READY does.
func (e *env) readyWith(deployID string, processes ...string) {
	e.t.Helper()
	p := &zonev1.DeployProgress{DeployId: deployID, Zone: "local", Step: stepReady}
	for i := 0; i+1 < len(processes); i += 2 {
		p.Processes = append(p.Processes, &zonev1.ProcessType{Name: processes[i], Command: processes[i+1]})
	}
	err := e.svc.Store().InTx(context.Background(), func(tx usecase.Tx) error { return e.svc.OnProgress(context.Background(), tx, p) })
	if err != nil {
		e.t.Fatal(err)
	}
}

// liveWith puts a deploy live with the given declarations (readyWith's pairs).
func (e *env) liveWith(deployID string, processes ...string) {
	e.t.Helper()
	e.readyWith(deployID, processes...)
	e.report(deployID, stepActive, "")
}

// formationOf is GET formation's list.
func (e *env) formationOf(account, slug string) (int, []map[string]any, map[string]any) {
	e.t.Helper()
	status, body, _ := e.request(account, "GET", "/api/apps/"+slug+"/formation", "", nil, 0)
	return status, entries(body), body
}

func (e *env) patchFormation(account, slug, body string) (int, []map[string]any, map[string]any) {
	e.t.Helper()
	status, out, _ := e.request(account, "PATCH", "/api/apps/"+slug+"/formation", "application/json", strings.NewReader(body), int64(len(body)))
	return status, entries(out), out
}

func entries(body map[string]any) []map[string]any {
	list, ok := body["list"].([]any)
	if !ok {
		return nil
	}
	out := []map[string]any{}
	for _, v := range list {
		out = append(out, v.(map[string]any))
	}
	return out
}

// quantities reads a formation list as "type=quantity/running" in its order.
func quantities(list []map[string]any) string {
	var parts []string
	for _, e := range list {
		parts = append(parts, e["type"].(string)+"="+num(e["quantity"])+"/"+num(e["running"]))
	}
	return strings.Join(parts, " ")
}

func num(v any) string {
	f, _ := v.(float64)
	return strconv.FormatInt(int64(f), 10)
}

// outboxOf decodes every message published under key (in order) into a new M.
func outboxOf[M proto.Message](e *env, key string, newM func() M) []M {
	e.t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT body FROM outbox WHERE routing_key = $1 ORDER BY seq`, key)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []M
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			e.t.Fatal(err)
		}
		m := newM()
		if err := proto.Unmarshal(raw, m); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

func (e *env) activations() []*zonev1.ActivateRevision {
	return outboxOf(e, "zone.local.activate", func() *zonev1.ActivateRevision { return &zonev1.ActivateRevision{} })
}

func (e *env) scales() []*zonev1.ScaleFormation {
	return outboxOf(e, "zone.local.formation", func() *zonev1.ScaleFormation { return &zonev1.ScaleFormation{} })
}

// formationString reads a zone command's formation as "type=quantity" in its order.
func formationString(f []*zonev1.ProcessQuantity) string {
	var parts []string
	for _, q := range f {
		parts = append(parts, q.GetType()+"="+strconv.FormatInt(q.GetQuantity(), 10))
	}
	return strings.Join(parts, " ")
}
