package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/health"
	"tori.dev/services/databases/internal/usecase"
)

// everyApp answers that team owns every slug.
type everyApp struct{ team string }

func (e everyApp) LookupApp(_ context.Context, accountID, slug string) (usecase.App, bool, error) {
	if accountID != e.team {
		return usecase.App{}, false, nil
	}
	return usecase.App{ID: "0190a5b4-0000-7000-8000-000000000001", AccountID: e.team, Slug: slug, Kind: "service", Zone: "local"}, true, nil
}

type noDatabase struct{}

func (noDatabase) Begin(context.Context) (pgx.Tx, error) { return nil, errors.New("no database here") }

// Every /api route is in the access table and goes through the gate before its handler: a
// caller whose token has no scope the table knows is refused 403 insufficient_scope on each,
// which only the gate answers (a handler reached would go on to the nil store and fail).
func TestEveryRouteIsGuarded(t *testing.T) {
	const team = "0190a5b4-0000-7000-8000-0000000000aa"
	dbs := usecase.NewDatabases(nil, everyApp{team: team}, nil, nil, time.Now, slog.New(slog.DiscardHandler))
	key := []byte("k")
	app := New(Deps{Databases: dbs, SigningKey: key, DB: noDatabase{}, Identity: health.NewIdentity("databases", "test"), Log: slog.New(slog.DiscardHandler)})
	param := regexp.MustCompile(`:(\w+)`)
	checked := 0
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") || r.Method == "HEAD" {
			continue
		}
		if _, ok := access.Find(r.Method, r.Path); !ok {
			t.Errorf("%s %s is not in contract/access's table", r.Method, r.Path)
			continue
		}
		checked++
		path := param.ReplaceAllString(r.Path, "0190a5b4-0000-7000-8000-000000000002")
		path = strings.Replace(path, "/apps/0190a5b4-0000-7000-8000-000000000002/", "/apps/api/", 1)
		req := httptest.NewRequest(r.Method, path, strings.NewReader(`{"dumpId":"0190a5b4-0000-7000-8000-000000000003"}`))
		req.Header.Set("Content-Type", "application/json")
		caller := callerid.Caller{AccountID: team, UserID: "u", TokenKind: callerid.KindAPI, TokenID: "t", Scope: "none-known"}
		callerid.Sign(key, req.Header.Set, caller, r.Method, req.Host, path, time.Now())
		res, err := app.Test(req, -1)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Method, path, err)
		}
		raw, _ := io.ReadAll(res.Body)
		var body struct{ Code, RequiredScope string }
		_ = json.Unmarshal(raw, &body)
		if res.StatusCode != 403 || body.Code != access.CodeInsufficientScope || body.RequiredScope == "" {
			t.Errorf("%s %s: %d %s; want the gate's 403 insufficient_scope", r.Method, r.Path, res.StatusCode, raw)
		}
	}
	if checked != 10 {
		t.Fatalf("%d /api routes checked, want 10", checked)
	}
}

// The team is the app's, found among the caller's teams only.
func TestAppTeamAsksTheCallersTeams(t *testing.T) {
	dbs := usecase.NewDatabases(nil, everyApp{team: "b"}, nil, nil, time.Now, slog.New(slog.DiscardHandler))
	ctx := usecase.WithAppMemo(context.Background())
	if team, found, err := dbs.AppTeam(ctx, []string{"a", "b"}, "api"); err != nil || !found || team != "b" {
		t.Fatalf("AppTeam(a, b) = %q %v %v", team, found, err)
	}
	if _, found, err := dbs.AppTeam(ctx, []string{"a", "c"}, "api"); err != nil || found {
		t.Fatalf("AppTeam(a, c) found=%v %v", found, err)
	}
}
