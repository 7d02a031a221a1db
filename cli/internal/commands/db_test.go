package commands

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Each db command calls its route of the app and says what happened in words; delete asks
// first; the password never appears (no answer carries it).
func TestDBCommands(t *testing.T) {
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		calls = append(calls, r.Method+" "+r.URL.Path+" "+strings.TrimSpace(string(body)))
		db := `{"id":"d1","appId":"a1","status":"ready","message":null,"createdAt":"2026-11-24T03:00:00.000Z"}`
		switch {
		case strings.HasSuffix(r.URL.Path, "/dumps") && r.Method == http.MethodGet:
			w.Write([]byte(`[{"id":"u1","status":"succeeded","sizeBytes":2048,"createdAt":"2026-11-24T03:00:00.000Z"}]`))
		case strings.HasSuffix(r.URL.Path, "/dumps"):
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(`{"id":"u2","status":"running","sizeBytes":0,"createdAt":"2026-11-24T03:00:00.000Z"}`))
		case strings.HasSuffix(r.URL.Path, "/restores"):
			var in struct{ DumpID string }
			json.Unmarshal(body, &in)
			w.WriteHeader(http.StatusAccepted)
			w.Write([]byte(`{"id":"r1","dumpId":"` + in.DumpID + `","status":"restoring","createdAt":"2026-11-24T03:00:00.000Z"}`))
		default:
			w.Write([]byte(db))
		}
	}))
	defer srv.Close()

	for _, c := range []struct {
		args []string
		call string
		says string
	}{
		{[]string{"db", "create"}, "POST /api/apps/api/database ", "Creating the database"},
		{[]string{"db", "status"}, "GET /api/apps/api/database ", "Database d1: ready"},
		{[]string{"db", "rotate"}, "POST /api/apps/api/database/credentials/rotate ", "Rotating the password"},
		{[]string{"db", "dumps"}, "GET /api/apps/api/database/dumps ", "u1"},
		{[]string{"db", "dump"}, "POST /api/apps/api/database/dumps ", "Dump u2 running"},
		{[]string{"db", "restore", "u1"}, `POST /api/apps/api/database/restores {"dumpId":"u1"}`, "Restore r1 of dump u1 restoring"},
		{[]string{"db", "delete", "--yes"}, "DELETE /api/apps/api/database ", "Deleting the database"},
	} {
		calls = nil
		code, out, stderr := run(t, srv.URL, "", append(c.args, "--app", "api")...)
		if code != 0 || len(calls) != 1 || calls[0] != c.call || !strings.Contains(out, c.says) {
			t.Errorf("%v: code %d calls %q out %q stderr %q", c.args, code, calls, out, stderr)
		}
	}
	calls = nil
	if code, _, stderr := run(t, srv.URL, "", "db", "delete", "--app", "api"); code != 1 || len(calls) != 0 || !strings.Contains(stderr, "pass --yes") {
		t.Errorf("delete without --yes: code %d calls %q stderr %q", code, calls, stderr)
	}
}
