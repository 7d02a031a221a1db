package api

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/pb33f/libopenapi"
	"github.com/pb33f/libopenapi/datamodel/high/base"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// The document the gateway serves; the client must never ask for what it does not describe.
var specPath = filepath.Join("..", "..", "..", "services", "gateway", "openapi.json")

var (
	specOnce sync.Once
	spec     *v3.Document
	specErr  error
)

func loadSpec(t *testing.T) *v3.Document {
	t.Helper()
	specOnce.Do(func() {
		b, err := os.ReadFile(specPath)
		if err != nil {
			specErr = err
			return
		}
		doc, err := libopenapi.NewDocument(b)
		if err != nil {
			specErr = err
			return
		}
		m, err := doc.BuildV3Model()
		if err != nil && m == nil {
			specErr = err
			return
		}
		spec = &m.Model
	})
	if specErr != nil {
		t.Fatalf("openapi document: %v", specErr)
	}
	return spec
}

func operationOf(doc *v3.Document, method, path string) *v3.Operation {
	item, ok := doc.Paths.PathItems.Get(path)
	if !ok || item == nil {
		return nil
	}
	op, _ := item.GetOperations().Get(strings.ToLower(method))
	return op
}

// properties gathers a schema's properties, through allOf, oneOf and anyOf (a field is
// known when any branch names it) and through array items when the Go type is a slice.
func properties(s *base.Schema) map[string]*base.SchemaProxy {
	out := map[string]*base.SchemaProxy{}
	if s == nil {
		return out
	}
	if s.Properties != nil {
		for k, v := range s.Properties.FromOldest() {
			out[k] = v
		}
	}
	for _, group := range [][]*base.SchemaProxy{s.AllOf, s.OneOf, s.AnyOf} {
		for _, p := range group {
			for k, v := range properties(p.Schema()) {
				if _, seen := out[k]; !seen {
					out[k] = v
				}
			}
		}
	}
	return out
}

func itemsOf(s *base.Schema) *base.Schema {
	if s == nil {
		return nil
	}
	if s.Items != nil && s.Items.IsA() {
		return s.Items.A.Schema()
	}
	for _, group := range [][]*base.SchemaProxy{s.OneOf, s.AnyOf, s.AllOf} {
		for _, p := range group {
			if it := itemsOf(p.Schema()); it != nil {
				return it
			}
		}
	}
	return nil
}

// checkType reports every JSON field of t that schema does not describe.
func checkType(t reflect.Type, s *base.Schema, where string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		items := itemsOf(s)
		if items == nil {
			// A multipart array part ("files") is described as an array; a list of
			// plain values needs nothing more.
			if t.Elem().Kind() == reflect.Struct {
				return []string{where + ": the document has no items schema"}
			}
			return nil
		}
		return checkType(t.Elem(), items, where+"[]")
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	props := properties(s)
	var missing []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name == "" || name == "-" {
			continue
		}
		p, ok := props[name]
		if !ok {
			missing = append(missing, where+"."+name)
			continue
		}
		missing = append(missing, checkType(f.Type, p.Schema(), where+"."+name)...)
	}
	return missing
}

func TestEveryOperationAndFieldIsInTheDocument(t *testing.T) {
	doc := loadSpec(t)
	for _, op := range Operations {
		name := op.Method + " " + op.Path
		o := operationOf(doc, op.Method, op.Path)
		if o == nil {
			t.Errorf("%s: not in the OpenAPI document", name)
			continue
		}
		item, _ := doc.Paths.PathItems.Get(op.Path)
		params := map[string]bool{}
		for _, p := range append(append([]*v3.Parameter{}, item.Parameters...), o.Parameters...) {
			params[p.In+":"+p.Name] = true
		}
		for _, q := range op.Query {
			if !params["query:"+q] {
				t.Errorf("%s: query parameter %q is not in the document", name, q)
			}
		}
		for _, m := range regexp.MustCompile(`\{([^}]+)\}`).FindAllStringSubmatch(op.Path, -1) {
			if !params["path:"+m[1]] {
				t.Errorf("%s: path parameter %q is not declared", name, m[1])
			}
		}
		check := func(v any, contentType string, schemas []*base.Schema, what string) {
			if v == nil {
				return
			}
			if len(schemas) == 0 {
				t.Errorf("%s: the document has no %s %s body", name, contentType, what)
				return
			}
			// A field must be in at least one of the answers (200 and 201 may differ).
			var best []string
			for i, s := range schemas {
				miss := checkType(reflect.TypeOf(v), s, reflect.TypeOf(v).Name())
				if i == 0 || len(miss) < len(best) {
					best = miss
				}
			}
			for _, m := range best {
				t.Errorf("%s: %s field %s is not in the document", name, what, m)
			}
		}
		requestSchemas := func(ct string) []*base.Schema {
			if o.RequestBody == nil || o.RequestBody.Content == nil {
				return nil
			}
			mt, ok := o.RequestBody.Content.Get(ct)
			if !ok || mt.Schema == nil {
				return nil
			}
			return []*base.Schema{mt.Schema.Schema()}
		}
		check(op.Request, "application/json", requestSchemas("application/json"), "request")
		check(op.Form, "multipart/form-data", requestSchemas("multipart/form-data"), "form")
		var answers []*base.Schema
		for code, r := range o.Responses.Codes.FromOldest() {
			if !strings.HasPrefix(code, "2") || r.Content == nil {
				continue
			}
			if mt, ok := r.Content.Get("application/json"); ok && mt.Schema != nil {
				answers = append(answers, mt.Schema.Schema())
			}
		}
		check(op.Response, "application/json", answers, "response")
	}
	// Every error is read through ErrorBody.
	errSchema, ok := doc.Components.Schemas.Get("Error")
	if !ok {
		t.Fatal("no Error schema")
	}
	for _, m := range checkType(reflect.TypeOf(ErrorBody{}), errSchema.Schema(), "Error") {
		t.Errorf("error field %s is not in the document", m)
	}
}

// The checker itself must catch a field the document lacks, or the test above proves nothing.
func TestDriftCheckCatchesAnUnknownField(t *testing.T) {
	doc := loadSpec(t)
	type bad struct {
		ID    string `json:"id"`
		Bogus string `json:"bogusField"`
	}
	o := operationOf(doc, "GET", "/api/apps/{slug}")
	r, _ := o.Responses.Codes.Get("200")
	mt, _ := r.Content.Get("application/json")
	miss := checkType(reflect.TypeOf(bad{}), mt.Schema.Schema(), "bad")
	if len(miss) != 1 || miss[0] != "bad.bogusField" {
		t.Fatalf("missing = %v, want [bad.bogusField]", miss)
	}
	if operationOf(doc, "GET", "/api/apps/{slug}/nothing") != nil {
		t.Fatal("an unknown route was found")
	}
}

// Every request every client method sends names a route of the document.
func TestEveryCallIsARouteOfTheDocument(t *testing.T) {
	doc := loadSpec(t)
	type route struct {
		method string
		re     *regexp.Regexp
	}
	var routes []route
	for path, item := range doc.Paths.PathItems.FromOldest() {
		re := regexp.MustCompile("^" + regexp.MustCompile(`\\\{[^}]+\\\}`).ReplaceAllString(regexp.QuoteMeta(path), `[^/]+`) + "$")
		for method := range item.GetOperations().FromOldest() {
			routes = append(routes, route{strings.ToUpper(method), re})
		}
	}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		if r.Method == http.MethodPost && r.Header.Get("Idempotency-Key") == "" {
			t.Errorf("%s %s without Idempotency-Key", r.Method, r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: "svc_x"}
	ctx := context.Background()
	up := &Upload{ContentType: "multipart/form-data; boundary=x", Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("--x--\r\n")), nil
	}, Length: 7}
	c.Account(ctx)
	c.ListApps(ctx, "")
	c.CreateApp(ctx, AppCreate{})
	c.GetApp(ctx, "a")
	c.DeleteApp(ctx, "a")
	c.ListDeploys(ctx, "a", 5)
	c.DeployImage(ctx, "a", ImageDeployRequest{})
	c.Upload(ctx, "a", up)
	c.GetDeploy(ctx, "a", "d")
	c.CancelDeploy(ctx, "a", "d")
	c.Rollback(ctx, "a", "d")
	c.Logs(ctx, "a", LogQuery{})
	c.ListEnv(ctx, "a")
	c.SetEnv(ctx, "a", "K", "v")
	c.UnsetEnv(ctx, "a", "K")
	c.ListDomains(ctx, "a")
	c.AddDomain(ctx, "a", "www.example.com")
	c.RemoveDomain(ctx, "a", "www.example.com")
	c.ListTokens(ctx)
	c.RevokeToken(ctx, "t")
	c.StartDevice(ctx, "")
	c.PollDevice(ctx, "x")
	c.LoopbackToken(ctx, LoopbackTokenRequest{})
	c.Billing(ctx, "")
	c.Plans(ctx)
	c.Formation(ctx, "a")
	c.Scale(ctx, "a", []FormationChange{{Type: "web", Quantity: 2}})
	c.ListCronJobs(ctx, "a")
	c.CreateCronJob(ctx, "a", CronJobCreate{Name: "nightly"})
	c.DeleteCronJob(ctx, "a", "nightly")
	c.RunCronJob(ctx, "a", "nightly")
	c.ListCronRuns(ctx, "a", "nightly", 10)
	c.ListApps(ctx, "acme")
	c.Billing(ctx, "acme")
	c.ListTeams(ctx)
	c.CreateTeam(ctx, TeamCreate{Name: "Acme"})
	c.GetTeam(ctx, "acme")
	c.RenameTeam(ctx, "acme", "Acme")
	c.DeleteTeam(ctx, "acme")
	c.ListMembers(ctx, "acme")
	c.SetMemberRole(ctx, "acme", "u", "admin")
	c.RemoveMember(ctx, "acme", "u")
	c.ListInvitations(ctx, "acme")
	c.Invite(ctx, "acme", InvitationCreate{Email: "a@example.com", Role: "viewer"})
	c.RevokeInvitation(ctx, "acme", "i")
	c.AcceptInvitation(ctx, "code")
	c.ListTeamTokens(ctx, "acme")
	c.RevokeTeamToken(ctx, "acme", "t")
	c.Audit(ctx, "acme", AuditQuery{Action: "app.delete", Limit: 5})
	c.CreateToken(ctx, TokenCreate{Name: "ci", Team: "acme", Scopes: []string{"deploy"}})
	c.ListPreviews(ctx, "a")
	c.PreviewImage(ctx, "a", PreviewImageRequest{Image: "x", Name: "pr-1"})
	c.PreviewUpload(ctx, "a", up)
	c.GetPreview(ctx, "a", "pr-1")
	c.SetPreviewTTL(ctx, "a", "pr-1", 3600)
	c.DeletePreview(ctx, "a", "pr-1")
	c.PromotePreview(ctx, "a", "pr-1")
	c.ListDrains(ctx, "a")
	c.CreateDrain(ctx, "a", "https://collector.example.com/in")
	c.DeleteDrain(ctx, "a", "d")
	c.TestDrain(ctx, "a", "d")
	c.Metrics(ctx, "a", MetricsQuery{Metric: "latency", Step: 300})
	if len(seen) != 62 {
		t.Fatalf("%d requests, want 62: %v", len(seen), seen)
	}
	for _, s := range seen {
		method, path, _ := strings.Cut(s, " ")
		found := false
		for _, r := range routes {
			if r.method == method && r.re.MatchString(path) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not a route of the document", s)
		}
	}
	_ = json.Valid
}
