package e2e

import (
	"encoding/binary"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/tests/e2e/harness"
)

// The apps service through the gateway: every numbered rule of POST and DELETE /api/apps,
// the App's fields, isolation between accounts, the app limit, the environment rules and the
// custom-hostname rules, with the whole control plane running as processes.
func TestApps(t *testing.T) {
	dns := startTXTServer(t)
	s := harness.Start(t, harness.Options{Env: map[string]string{
		"AUTH_LIMIT_PER_15MIN":  "100000",
		"DNS_RESOLVER":          dns.addr,
		"DOMAIN_CHECK_INTERVAL": "100ms",
	}})
	call := func(t *testing.T, method, path, token string, body any) *harness.Response {
		t.Helper()
		return s.Do(t, harness.Request{Method: method, Path: path, Token: token, Body: body})
	}
	create := func(t *testing.T, token string, body any) map[string]any {
		t.Helper()
		r := call(t, http.MethodPost, "/api/apps", token, body)
		if r.Status != http.StatusCreated {
			t.Fatalf("create %v: %d %s", body, r.Status, r.Body)
		}
		return r.Map(t)
	}

	t.Run("POST /api/apps rules and the App's fields", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "apps-create")
		app := create(t, a.Token, nil) // rules 1, 4 and 5: no body at all
		expectKeys(t, "App", app, "id", "slug", "name", "region", "zone", "status", "framework", "kind", "currentDeployId", "url", "createdAt", "updatedAt", "team")
		if !regexp.MustCompile(`^[a-z]+-[a-z]+$`).MatchString(app["slug"].(string)) {
			t.Fatalf("generated slug %v", app["slug"])
		}
		if app["region"] != "eu" || app["kind"] != "static" || app["status"] != "deploying" || app["currentDeployId"] != nil ||
			app["framework"] != "static" || app["url"] != "https://"+app["slug"].(string)+".apps.localhost" || app["name"] != app["slug"] {
			t.Fatalf("new app %v", app)
		}
		for _, f := range []string{"createdAt", "updatedAt"} {
			if _, err := time.Parse(time.RFC3339, app[f].(string)); err != nil {
				t.Fatalf("%s %v", f, app[f])
			}
		}
		if got := s.Get(t, "/api/apps/"+app["slug"].(string), a.Token); got.Status != http.StatusOK || got.Map(t)["id"] != app["id"] {
			t.Fatalf("GET: %d %s", got.Status, got.Body)
		}
		svc := create(t, a.Token, map[string]any{"name": "e2e-svc-" + harness.Hex(3), "region": "us", "kind": "service"})
		if svc["kind"] != "service" || svc["region"] != "us" {
			t.Fatalf("service app %v", svc)
		}
		// Rule 2.
		for _, name := range []any{"Bad_Name", "", strings.Repeat("a", 64), 7} {
			expectError(t, call(t, http.MethodPost, "/api/apps", a.Token, map[string]any{"name": name}), http.StatusBadRequest, "invalid slug")
		}
		// Rule 3.
		for _, name := range []string{"api", "console", "admin", "www", "tori", "enroll", "my"} {
			expectError(t, call(t, http.MethodPost, "/api/apps", a.Token, map[string]any{"name": name}), http.StatusConflict, "slug taken")
		}
		// Rule 6's neighbour: a live app's slug is taken for everyone.
		b := s.NewAccount(t, "apps-create-b")
		expectError(t, call(t, http.MethodPost, "/api/apps", b.Token, map[string]any{"name": svc["slug"]}), http.StatusConflict, "slug taken")
		expectError(t, call(t, http.MethodPost, "/api/apps", a.Token, map[string]any{"region": "mars"}), http.StatusBadRequest, "invalid_region")
		expectError(t, call(t, http.MethodPost, "/api/apps", a.Token, "{not json"), http.StatusBadRequest, "invalid_json")
	})

	t.Run("the app limit", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "apps-limit")
		for i := 0; i < 3; i++ {
			create(t, a.Token, nil)
		}
		r := call(t, http.MethodPost, "/api/apps", a.Token, nil)
		m := r.Map(t)
		if r.Status != http.StatusForbidden || m["code"] != "app_limit_reached" || m["limit"] != float64(3) || m["plan"] != "nestling" ||
			!strings.Contains(m["error"].(string), " ") {
			t.Fatalf("fourth app: %d %s", r.Status, r.Body)
		}
	})

	t.Run("the account's default region", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "apps-region")
		if r := s.Do(t, harness.Request{Method: http.MethodPatch, Path: "/api/account", Token: a.Token, Body: map[string]string{"defaultRegion": "us"}}); r.Status != http.StatusOK {
			t.Fatalf("PATCH: %d %s", r.Status, r.Body)
		}
		// The apps service learns it from identity's event: retry until it has.
		poll(t, 15*time.Second, "region us by default", func() bool {
			app := create(t, a.Token, nil)
			call(t, http.MethodDelete, "/api/apps/"+app["slug"].(string), a.Token, nil)
			return app["region"] == "us"
		})
	})

	t.Run("DELETE /api/apps/{slug} and reclamation", func(t *testing.T) {
		t.Parallel()
		a, b := s.NewAccount(t, "apps-del"), s.NewAccount(t, "apps-del-b")
		slug := "e2e-del-" + harness.Hex(3)
		create(t, a.Token, map[string]any{"name": slug})
		r := call(t, http.MethodDelete, "/api/apps/"+slug, a.Token, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		res := r.Map(t)
		expectKeys(t, "Delete result", res, "ok", "reclaimed")
		if res["ok"] != true || res["reclaimed"] != false {
			t.Fatalf("delete result %v (logs must confirm first)", res)
		}
		// Rule 1: gone from every route at once.
		for _, p := range []string{"/api/apps/" + slug, "/api/apps/" + slug + "/env", "/api/apps/" + slug + "/domains"} {
			expectError(t, s.Get(t, p, a.Token), http.StatusNotFound, "not found")
		}
		expectError(t, call(t, http.MethodDelete, "/api/apps/"+slug, a.Token, nil), http.StatusNotFound, "not found")
		var list []map[string]any
		s.Get(t, "/api/apps", a.Token).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("deleted app listed: %v", list)
		}
		// Rules 2, 3 and create rule 6: until the logs service confirms its cleanup the slug
		// is held (409); then it is free. Every answer is one or the other, and it ends free.
		poll(t, 30*time.Second, "slug reclaimed", func() bool {
			r := call(t, http.MethodPost, "/api/apps", b.Token, map[string]any{"name": slug})
			if r.Status != http.StatusConflict && r.Status != http.StatusCreated {
				t.Fatalf("while reclaiming: %d %s", r.Status, r.Body)
			}
			return r.Status == http.StatusCreated
		})
		expectError(t, s.Get(t, "/api/apps/"+slug, a.Token), http.StatusNotFound, "not found")
	})

	t.Run("another account gets 404 from every app route", func(t *testing.T) {
		t.Parallel()
		owner, stranger := s.NewAccount(t, "apps-owner"), s.NewAccount(t, "apps-stranger")
		slug := "e2e-private-" + harness.Hex(3)
		create(t, owner.Token, map[string]any{"name": slug})
		if r := call(t, http.MethodPut, "/api/apps/"+slug+"/env", owner.Token, map[string]string{"key": "K", "value": "v"}); r.Status != http.StatusCreated {
			t.Fatalf("env: %d %s", r.Status, r.Body)
		}
		for _, r := range []struct {
			method, path string
			body         any
		}{
			{http.MethodGet, "", nil}, {http.MethodDelete, "", nil},
			{http.MethodGet, "/env", nil}, {http.MethodPut, "/env", map[string]string{"key": "K", "value": "x"}}, {http.MethodDelete, "/env/K", nil},
			{http.MethodGet, "/domains", nil}, {http.MethodPost, "/domains", map[string]string{"hostname": "x.example.com"}},
			{http.MethodDelete, "/domains/x.example.com", nil},
		} {
			expectError(t, call(t, r.method, "/api/apps/"+slug+r.path, stranger.Token, r.body), http.StatusNotFound, "not found")
		}
		var list []any
		s.Get(t, "/api/apps", stranger.Token).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("stranger lists %v", list)
		}
		if r := s.Get(t, "/api/apps/"+slug, owner.Token); r.Status != http.StatusOK {
			t.Fatalf("owner: %d", r.Status)
		}
	})

	const plaintext = "e2e-plaintext-value-9f3a61c0"
	t.Run("environment variables", func(t *testing.T) {
		t.Parallel()
		a := s.NewAccount(t, "apps-env")
		slug := "e2e-env-" + harness.Hex(3)
		create(t, a.Token, map[string]any{"name": slug}) // static: stored, never read
		path := "/api/apps/" + slug + "/env"
		if r := call(t, http.MethodPut, path, a.Token, map[string]string{"key": "SECRET", "value": plaintext}); r.Status != http.StatusCreated {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		if r := call(t, http.MethodPut, path, a.Token, map[string]string{"key": "SECRET", "value": plaintext + "-2"}); r.Status != http.StatusOK {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
		if r := call(t, http.MethodPut, path, a.Token, map[string]string{"key": "ALPHA", "value": "abc"}); r.Status != http.StatusCreated {
			t.Fatalf("second: %d %s", r.Status, r.Body)
		}
		var vars []map[string]any
		r := s.Get(t, path, a.Token)
		r.JSON(t, &vars)
		if len(vars) != 2 || vars[0]["key"] != "ALPHA" || vars[0]["value"] != "********" || vars[1]["key"] != "SECRET" || vars[1]["value"] != "e2e********" {
			t.Fatalf("list %s", r.Body)
		}
		for _, v := range vars {
			expectKeys(t, "env entry", v, "key", "value")
		}
		for _, key := range []string{"lower", "1X", "A-B"} {
			expectError(t, call(t, http.MethodPut, path, a.Token, map[string]string{"key": key, "value": "v"}), http.StatusBadRequest, "invalid_env_key")
		}
		expectError(t, call(t, http.MethodPut, path, a.Token, map[string]any{"key": "N", "value": 5}), http.StatusBadRequest, "invalid_env_value")
		if r := call(t, http.MethodDelete, path+"/ALPHA", a.Token, nil); r.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		expectError(t, call(t, http.MethodDelete, path+"/ALPHA", a.Token, nil), http.StatusNotFound, "not found")
	})

	t.Run("custom hostnames", func(t *testing.T) {
		t.Parallel()
		owner, squatter, late := s.NewAccount(t, "dom-owner"), s.NewAccount(t, "dom-squat"), s.NewAccount(t, "dom-late")
		site, squat, lateApp := "e2e-site-"+harness.Hex(3), "e2e-squat-"+harness.Hex(3), "e2e-late-"+harness.Hex(3)
		create(t, owner.Token, map[string]any{"name": site})
		create(t, squatter.Token, map[string]any{"name": squat})
		create(t, late.Token, map[string]any{"name": lateApp})
		svc := create(t, owner.Token, map[string]any{"kind": "service"})
		host := "shop-" + harness.Hex(3) + ".example.com"
		add := func(token, slug, hostname string) *harness.Response {
			return call(t, http.MethodPost, "/api/apps/"+slug+"/domains", token, map[string]string{"hostname": hostname})
		}
		// Nestling allows none.
		e := expectError(t, add(owner.Token, site, host), http.StatusForbidden, "domain_limit_reached")
		if e.Code != "domain_limit_reached" || e.Limit == nil || *e.Limit != 0 || e.Plan != "nestling" {
			t.Fatalf("nestling: %+v", e)
		}
		for _, acc := range []harness.Account{owner, squatter, late} {
			if out, err := s.Command("billing", "set-plan", "-account", acc.Email, "-plan", "songbird"); err != nil {
				t.Fatalf("set-plan: %v\n%s", err, out)
			}
		}
		var mine map[string]any
		poll(t, 15*time.Second, "songbird's limit reaches apps", func() bool {
			r := add(owner.Token, site, host)
			if r.Status == http.StatusCreated {
				mine = r.Map(t)
			}
			return r.Status == http.StatusCreated
		})
		expectKeys(t, "domain", mine, "hostname", "status", "verification", "createdAt", "certificate")
		if c := mine["certificate"].(map[string]any); c["status"] != "pending" || c["expiresAt"] != nil || c["lastError"] != nil {
			t.Fatalf("a new hostname's certificate %v", c)
		}
		v := mine["verification"].(map[string]any)
		if mine["status"] != "pending" || v["type"] != "TXT" || v["name"] != "_tori-challenge."+host || !strings.HasPrefix(v["value"].(string), "tori-verify=") {
			t.Fatalf("domain %v", mine)
		}
		expectError(t, add(owner.Token, svc["slug"].(string), "svc."+host), http.StatusBadRequest, "static_only")
		for _, bad := range []string{"apps.localhost", "x.apps.localhost", "1.2.3.4", "*.example.com", "nodots", "bad_name.example.com"} {
			expectError(t, add(owner.Token, site, bad), http.StatusBadRequest, "invalid_hostname")
		}
		// A pending claim elsewhere never blocks.
		poll(t, 15*time.Second, "squatter's plan", func() bool { return add(squatter.Token, squat, host).Status == http.StatusCreated })
		dns.set("_tori-challenge."+host, v["value"].(string))
		poll(t, 15*time.Second, "hostname active", func() bool {
			var list []map[string]any
			s.Get(t, "/api/apps/"+site+"/domains", owner.Token).JSON(t, &list)
			return len(list) == 1 && list[0]["status"] == "active"
		})
		var squatList []map[string]any
		s.Get(t, "/api/apps/"+squat+"/domains", squatter.Token).JSON(t, &squatList)
		if len(squatList) != 1 || squatList[0]["status"] != "pending" {
			t.Fatalf("squatter's claim %v", squatList)
		}
		// Active on one app: taken for every other account.
		poll(t, 15*time.Second, "late account's plan", func() bool {
			r := add(late.Token, lateApp, host)
			if r.Status == http.StatusForbidden {
				return false
			}
			expectError(t, r, http.StatusConflict, "hostname taken")
			return true
		})
		if r := call(t, http.MethodDelete, "/api/apps/"+site+"/domains/"+host, owner.Token, nil); r.Status != http.StatusNoContent {
			t.Fatalf("remove: %d %s", r.Status, r.Body)
		}
		expectError(t, call(t, http.MethodDelete, "/api/apps/"+site+"/domains/"+host, owner.Token, nil), http.StatusNotFound, "not found")
	})

	// Runs once every parallel subtest has finished, while the services' logs are complete.
	t.Cleanup(func() {
		for name, log := range s.Logs() {
			if strings.Contains(log, plaintext) {
				t.Errorf("the %s service logged an environment value", name)
			}
		}
	})
}

// poll retries check every 300 ms: slowly enough that a minute of polling stays under the
// 120 writes a minute each operation allows an account.
func poll(t *testing.T, timeout time.Duration, what string, check func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !check() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// txtServer is a DNS server answering TXT questions from records the test sets, so hostname
// verification runs end to end through DNS_RESOLVER. It speaks just enough of RFC 1035.
type txtServer struct {
	addr string
	mu   sync.Mutex
	txt  map[string][]string
}

func startTXTServer(t *testing.T) *txtServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	d := &txtServer{addr: pc.LocalAddr().String(), txt: map[string][]string{}}
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := d.answer(buf[:n]); resp != nil {
				pc.WriteTo(resp, from)
			}
		}
	}()
	return d
}

func (d *txtServer) set(name string, values ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.txt[strings.ToLower(strings.TrimSuffix(name, "."))] = values
}

func (d *txtServer) answer(req []byte) []byte {
	if len(req) < 12 || binary.BigEndian.Uint16(req[4:6]) != 1 {
		return nil
	}
	var labels []string
	off := 12
	for off < len(req) && req[off] != 0 {
		l := int(req[off])
		if l > 63 || off+1+l > len(req) {
			return nil
		}
		labels = append(labels, string(req[off+1:off+1+l]))
		off += 1 + l
	}
	off++ // the root label
	if off+4 > len(req) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(req[off : off+2])
	question := req[12 : off+4]
	d.mu.Lock()
	values, ok := d.txt[strings.ToLower(strings.Join(labels, "."))]
	values = slices.Clone(values)
	d.mu.Unlock()

	flags := uint16(0x8400) | binary.BigEndian.Uint16(req[2:4])&0x0100 // QR, AA, and RD as asked
	if !ok {
		flags |= 3 // NXDOMAIN
	}
	if qtype != 16 {
		values = nil
	}
	out := make([]byte, 12, 512)
	copy(out[0:2], req[0:2])
	binary.BigEndian.PutUint16(out[2:4], flags)
	binary.BigEndian.PutUint16(out[4:6], 1)
	binary.BigEndian.PutUint16(out[6:8], uint16(len(values)))
	out = append(out, question...)
	for _, v := range values {
		if len(v) > 255 {
			v = v[:255]
		}
		out = append(out, 0xc0, 0x0c, 0, 16, 0, 1, 0, 0, 0, 1)
		out = binary.BigEndian.AppendUint16(out, uint16(1+len(v)))
		out = append(out, byte(len(v)))
		out = append(out, v...)
	}
	return out
}
