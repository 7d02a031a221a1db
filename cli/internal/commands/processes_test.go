package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"tori.dev/cli/internal/api"
)

func TestParseScale(t *testing.T) {
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf("t%d=1", i)
	}
	cases := []struct {
		args []string
		want []api.FormationChange
		err  string
	}{
		{[]string{"web=2", "worker=1"}, []api.FormationChange{{Type: "web", Quantity: 2}, {Type: "worker", Quantity: 1}}, ""},
		{[]string{"worker=0"}, []api.FormationChange{{Type: "worker", Quantity: 0}}, ""},
		{[]string{"queue-2=10"}, []api.FormationChange{{Type: "queue-2", Quantity: 10}}, ""},
		{nil, nil, "nothing to scale"},
		{[]string{"web"}, nil, `"web": want TYPE=QUANTITY`},
		{[]string{"web2"}, nil, "want TYPE=QUANTITY"},
		{[]string{"Web=1"}, nil, `"Web" is not a process type`},
		{[]string{"2web=1"}, nil, "is not a process type"},
		{[]string{"=1"}, nil, "is not a process type"},
		{[]string{strings.Repeat("a", 31) + "=1"}, nil, "is not a process type"},
		{[]string{"web=-1"}, nil, "whole number, 0 or more"},
		{[]string{"web=+1"}, nil, "whole number, 0 or more"},
		{[]string{"web=1.5"}, nil, "whole number"},
		{[]string{"web="}, nil, "whole number"},
		{[]string{"web=two"}, nil, "whole number"},
		{[]string{"web=1", "worker=2", "web=3"}, nil, "web is given twice"},
		{many, nil, "at most 50"},
	}
	for _, tc := range cases {
		got, err := ParseScale(tc.args)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: err %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v: %v %v, want %v", tc.args, got, err, tc.want)
		}
	}
}

func TestParseCronAdd(t *testing.T) {
	cmd := "python3 report.py"
	cases := []struct {
		name string
		f    CronFlags
		want api.CronJobCreate
		err  string
	}{
		{"nightly", CronFlags{Schedule: "0 3 * * *", Timezone: "Europe/Prague", Command: cmd, Policy: "replace", Timeout: 300},
			api.CronJobCreate{Name: "nightly", Schedule: "0 3 * * *", Timezone: "Europe/Prague", Command: cmd, ConcurrencyPolicy: "replace", TimeoutSeconds: 300}, ""},
		// Defaults are the API's: nothing sent for them.
		{"sweep", CronFlags{Schedule: "@hourly", Command: "./sweep"}, api.CronJobCreate{Name: "sweep", Schedule: "@hourly", Command: "./sweep"}, ""},
		// Spaces between fields do not matter.
		{"a", CronFlags{Schedule: " */15  9-17 * *  mon-fri ", Command: cmd}, api.CronJobCreate{Name: "a", Schedule: "*/15 9-17 * * mon-fri", Command: cmd}, ""},
		{"Nightly", CronFlags{Schedule: "0 3 * * *", Command: cmd}, api.CronJobCreate{}, `"Nightly" is not a cron job name`},
		{"night_ly", CronFlags{Schedule: "0 3 * * *", Command: cmd}, api.CronJobCreate{}, "is not a cron job name"},
		{"n", CronFlags{Command: cmd}, api.CronJobCreate{}, "--schedule is required"},
		{"n", CronFlags{Schedule: "0 3 * *", Command: cmd}, api.CronJobCreate{}, "has 4 fields; want 5"},
		{"n", CronFlags{Schedule: "0 0 3 * * *", Command: cmd}, api.CronJobCreate{}, "has 6 fields"},
		{"n", CronFlags{Schedule: "@every 5m", Command: cmd}, api.CronJobCreate{}, "the shorthands are"},
		{"n", CronFlags{Schedule: "@reboot", Command: cmd}, api.CronJobCreate{}, "the shorthands are"},
		{"n", CronFlags{Schedule: "0 3 * * *", Command: "  "}, api.CronJobCreate{}, "--command is required"},
		{"n", CronFlags{Schedule: "0 3 * * *", Command: cmd, Policy: "skip"}, api.CronJobCreate{}, `--policy "skip"`},
		{"n", CronFlags{Schedule: "0 3 * * *", Command: cmd, Timeout: -5}, api.CronJobCreate{}, "--timeout"},
	}
	for _, tc := range cases {
		got, err := ParseCronAdd(tc.name, tc.f)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %+v: err %v, want %q", tc.name, tc.f, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %+v: %+v %v, want %+v", tc.name, tc.f, got, err, tc.want)
		}
	}
}

func TestParseProcesses(t *testing.T) {
	got, err := ParseProcesses([]string{"web=./server --port $PORT", "worker=./worker --queue=default"})
	want := map[string]string{"web": "./server --port $PORT", "worker": "./worker --queue=default"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%v %v", got, err)
	}
	if got, err := ParseProcesses(nil); got != nil || err != nil {
		t.Fatalf("none: %v %v", got, err)
	}
	for in, msg := range map[string]string{
		"worker":      "want NAME=COMMAND",
		"Worker=./w":  "is not a process type",
		"worker=":     "the command is empty",
		"worker=   ":  "the command is empty",
		"1worker=./w": "is not a process type",
	} {
		if _, err := ParseProcesses([]string{in}); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: err %v, want %q", in, err, msg)
		}
	}
	if _, err := ParseProcesses([]string{"w=a", "w=b"}); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("twice: %v", err)
	}
}

// processAPI answers the formation and cron routes of app "api" as the deploys service
// documents them, and records each request.
type processAPI struct {
	mu    sync.Mutex
	calls []string
}

const (
	formationJSON = `[{"type":"web","command":"./server","quantity":2,"running":2,"updatedAt":"2026-11-29T10:00:00Z"},` +
		`{"type":"worker","command":"./worker --queue default","quantity":1,"running":0,"updatedAt":"2026-11-29T10:00:00Z"}]`
	runJSON = `{"id":"0193f1c2-0000-7000-8000-000000000001","trigger":"manual","scheduledFor":"2026-11-29T10:05:00Z","status":"pending",` +
		`"skipReason":null,"exitCode":null,"startedAt":null,"finishedAt":null,"deployId":"d1"}`
	jobJSON = `{"name":"nightly","schedule":"0 3 * * *","timezone":"Europe/Prague","command":"python3 report.py","concurrencyPolicy":"forbid",` +
		`"timeoutSeconds":900,"enabled":true,"nextRunAt":"2026-11-30T02:00:00Z","lastRun":{"id":"r0","trigger":"scheduled",` +
		`"scheduledFor":"2026-11-29T02:00:00Z","status":"failed","skipReason":null,"exitCode":2,"startedAt":"2026-11-29T02:00:01Z",` +
		`"finishedAt":"2026-11-29T02:00:09Z","deployId":"d1"},"createdAt":"2026-11-01T00:00:00Z","updatedAt":"2026-11-01T00:00:00Z"}`
)

func (p *processAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	p.mu.Lock()
	call := r.Method + " " + r.URL.RequestURI()
	if len(body) > 0 {
		call += " " + string(body)
	}
	p.calls = append(p.calls, call)
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.Method + " " + r.URL.Path {
	case "GET /api/apps/api/formation":
		w.Write([]byte(formationJSON))
	case "GET /api/apps/static/formation":
		w.Write([]byte(`[]`))
	case "PATCH /api/apps/api/formation":
		var in api.FormationUpdate
		json.Unmarshal(body, &in)
		if in.Updates[0].Type == "clock" {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"unknown_process_type","code":"unknown_process_type","type":"clock","message":"the live deploy declares no process type clock"}`))
			return
		}
		if in.Updates[0].Quantity > 1 {
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":"instances_per_process_limit","code":"instances_per_process_limit","limit":1,"plan":"nestling","message":"the nestling plan runs at most 1 instance of each process type"}`))
			return
		}
		w.Write([]byte(strings.Replace(formationJSON, `"quantity":1,"running":0`, `"quantity":0,"running":1`, 1)))
	case "GET /api/apps/api/crons":
		w.Write([]byte(`[` + jobJSON + `,{"name":"sweep","schedule":"@hourly","timezone":"UTC","command":"./sweep","concurrencyPolicy":"replace",` +
			`"timeoutSeconds":60,"enabled":false,"nextRunAt":null,"lastRun":null,"createdAt":"2026-11-01T00:00:00Z","updatedAt":"2026-11-01T00:00:00Z"}]`))
	case "POST /api/apps/api/crons":
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(jobJSON))
	case "DELETE /api/apps/api/crons/nightly":
		w.WriteHeader(http.StatusNoContent)
	case "POST /api/apps/api/crons/nightly/runs":
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(runJSON))
	case "POST /api/apps/api/crons/busy/runs":
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"error":"run_in_progress","code":"run_in_progress","message":"a run of busy is under way and its policy is forbid"}`))
	case "GET /api/apps/api/crons/nightly/runs":
		w.Write([]byte(`[` + runJSON + `,{"id":"r9","trigger":"scheduled","scheduledFor":"2026-11-29T02:00:00Z","status":"skipped",` +
			`"skipReason":"overlap","exitCode":null,"startedAt":null,"finishedAt":null,"deployId":null}]`))
	case "GET /api/apps/api/crons/gone/runs":
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not found","code":"not_found"}`))
	case "GET /api/apps/api/logs":
		w.Write([]byte(`{"retentionDays":7,"start":"2026-11-29T09:00:00Z","end":"2026-11-29T10:00:00Z","entries":[` +
			`{"id":"1","timestamp":"2026-11-29T09:30:00.000Z","stream":"stdout","deployId":"d1","message":"job 42 done","process":"worker.1"}],"next":null}`))
	default:
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":"not found"}`))
	}
}

func (p *processAPI) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls
	p.calls = nil
	return c
}

// lines is out's lines with runs of spaces made one, so a table's columns compare simply.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		ls = append(ls, strings.Join(strings.Fields(l), " "))
	}
	return ls
}

func TestPsScaleAndCronAgainstTheAPI(t *testing.T) {
	fake := &processAPI{}
	srv := httptest.NewServer(fake)
	defer srv.Close()

	cases := []struct {
		name  string
		args  []string
		code  int
		calls []string
		out   []string // whole stdout, spaces squeezed
		err   string   // in stderr
	}{
		{"ps", []string{"ps", "-a", "api"}, 0, []string{"GET /api/apps/api/formation"}, []string{
			"TYPE QUANTITY RUNNING COMMAND",
			"web 2 2 ./server",
			"worker 1 0 ./worker --queue default",
		}, ""},
		{"ps of a static app", []string{"ps", "-a", "static"}, 0, []string{"GET /api/apps/static/formation"}, []string{
			"No processes: a static site runs none, and a service has them once a deploy is live.",
		}, ""},
		{"scale", []string{"scale", "worker=0", "web=1", "-a", "api"}, 0,
			[]string{`PATCH /api/apps/api/formation {"updates":[{"type":"worker","quantity":0},{"type":"web","quantity":1}]}`}, []string{
				"TYPE QUANTITY RUNNING COMMAND",
				"web 2 2 ./server",
				"worker 0 1 ./worker --queue default",
			}, ""},
		{"scale over the plan", []string{"scale", "worker=2", "-a", "api"}, 1,
			[]string{`PATCH /api/apps/api/formation {"updates":[{"type":"worker","quantity":2}]}`}, []string{""},
			`app "api": instances_per_process_limit: the nestling plan runs at most 1 instance of each process type (PATCH ` + srv.URL + `/api/apps/api/formation): "tori plans" shows each plan's limits`},
		{"scale an unknown type", []string{"scale", "clock=1", "-a", "api"}, 1,
			[]string{`PATCH /api/apps/api/formation {"updates":[{"type":"clock","quantity":1}]}`}, []string{""},
			`"tori ps -a api" lists the types its live deploy declares`},
		{"scale parse error sends nothing", []string{"scale", "web=two", "-a", "api"}, 2, nil, []string{""},
			`"web=two": the quantity must be a whole number, 0 or more`},
		{"scale without arguments", []string{"scale", "-a", "api"}, 2, nil, []string{""}, "requires at least 1 arg"},
		{"cron ls", []string{"cron", "ls", "-a", "api"}, 0, []string{"GET /api/apps/api/crons"}, []string{
			"NAME SCHEDULE TIMEZONE NEXT RUN LAST RUN COMMAND",
			"nightly 0 3 * * * Europe/Prague 2026-11-30T02:00:00Z failed (exit 2) python3 report.py",
			"sweep @hourly UTC disabled - ./sweep",
		}, ""},
		{"cron add", []string{"cron", "add", "nightly", "--schedule", "0 3 * * *", "--timezone", "Europe/Prague", "--command", "python3 report.py", "--timeout", "300", "-a", "api"}, 0,
			[]string{`POST /api/apps/api/crons {"name":"nightly","schedule":"0 3 * * *","timezone":"Europe/Prague","command":"python3 report.py","timeoutSeconds":300}`},
			[]string{"Added cron job nightly: 0 3 * * * (Europe/Prague), next run 2026-11-30T02:00:00Z."}, ""},
		{"cron add without a schedule", []string{"cron", "add", "nightly", "--command", "x", "-a", "api"}, 2, nil, []string{""}, "--schedule is required"},
		{"cron run", []string{"cron", "run", "nightly", "-a", "api"}, 0, []string{"POST /api/apps/api/crons/nightly/runs"},
			[]string{"Started run 0193f1c2-0000-7000-8000-000000000001 of nightly (pending). Its output: tori logs --process cron.nightly.0193f1c2-0000-7000-8000-000000000001"}, ""},
		{"cron run under forbid", []string{"cron", "run", "busy", "-a", "api"}, 1, []string{"POST /api/apps/api/crons/busy/runs"}, []string{""},
			"run_in_progress: a run of busy is under way and its policy is forbid"},
		{"cron runs", []string{"cron", "runs", "nightly", "--limit", "5", "-a", "api"}, 0, []string{"GET /api/apps/api/crons/nightly/runs?limit=5"}, []string{
			"ID TRIGGER SCHEDULED FOR STATUS STARTED FINISHED",
			"0193f1c2-0000-7000-8000-000000000001 manual 2026-11-29T10:05:00Z pending - -",
			"r9 scheduled 2026-11-29T02:00:00Z skipped: overlap - -",
		}, ""},
		{"cron runs of an unknown job", []string{"cron", "runs", "gone", "-a", "api"}, 1, []string{"GET /api/apps/api/crons/gone/runs"}, []string{""},
			`cron job "gone" of app "api" not found`},
		{"cron rm", []string{"cron", "rm", "nightly", "--yes", "-a", "api"}, 0, []string{"DELETE /api/apps/api/crons/nightly"}, []string{"Removed cron job nightly."}, ""},
		{"cron rm asks first", []string{"cron", "rm", "nightly", "-a", "api"}, 1, nil, []string{""}, "pass --yes"},
		{"cron rm of a bad name", []string{"cron", "rm", "Nightly", "--yes", "-a", "api"}, 2, nil, []string{""}, "is not a cron job name"},
		{"logs of one type", []string{"logs", "--process", "worker", "-a", "api"}, 0, nil, nil, ""},
		{"logs of a bad process", []string{"logs", "--process", "Worker!", "-a", "api"}, 2, nil, []string{""}, `--process "Worker!"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fake.take()
			code, out, stderr := run(t, srv.URL, "", tc.args...)
			calls := fake.take()
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stdout %q stderr %q", code, tc.code, out, stderr)
			}
			if tc.err != "" && !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr %q, want %q in it", stderr, tc.err)
			}
			if tc.out != nil && !reflect.DeepEqual(lines(out), tc.out) {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, strings.Join(tc.out, "\n"))
			}
			if tc.calls != nil && !reflect.DeepEqual(calls, tc.calls) || tc.calls == nil && tc.name != "logs of one type" && len(calls) != 0 {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
			if tc.name == "logs of one type" {
				if len(calls) == 0 || !strings.Contains(calls[0], "process=worker") {
					t.Errorf("calls %q: want ?process=worker", calls)
				}
				if !strings.Contains(out, "stdout  worker.1 job 42 done") {
					t.Errorf("stdout %q: want the line's process", out)
				}
			}
		})
	}
}

// An image deploy's --process values become the body's processes; without --image they are
// a usage error and nothing is sent.
func TestDeployImageProcesses(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.Method+" "+r.URL.Path+" "+string(b))
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":"d1","appId":"a1","kind":"image","status":"building","image":null,"release":null,"rollbackOf":null,"error":null,"createdAt":"x","finishedAt":null}`))
	}))
	defer srv.Close()
	img := "ghcr.io/acme/web@sha256:" + strings.Repeat("a", 64)
	code, _, stderr := run(t, srv.URL, "", "deploy", "--image", img, "--process", "web=./server", "--process", "worker=./worker -q a=b", "--detach", "-a", "api")
	want := `POST /api/apps/api/deploys {"image":"` + img + `","processes":{"web":"./server","worker":"./worker -q a=b"}}`
	if code != 0 || len(bodies) != 1 || bodies[0] != want {
		t.Fatalf("code %d bodies %q stderr %q; want %q", code, bodies, stderr, want)
	}
	bodies = nil
	code, _, stderr = run(t, srv.URL, "", "deploy", ".", "--process", "worker=./w", "-a", "api")
	if code != 2 || len(bodies) != 0 || !strings.Contains(stderr, "--process goes with --image") {
		t.Fatalf("source deploy with --process: code %d bodies %q stderr %q", code, bodies, stderr)
	}
}
