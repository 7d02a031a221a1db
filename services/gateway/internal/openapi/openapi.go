// Package openapi assembles the public OpenAPI document: the gateway's own document, which
// describes every route, with the fragments the owning services write merged over it.
package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"tori.dev/contract/access"
	"tori.dev/services/gateway/internal/routes"
)

// Doc is a decoded OpenAPI document or fragment.
type Doc = map[string]any

// Fragment is one service's part: its paths and the components they use.
type Fragment struct {
	Name string // for messages, e.g. the file it came from
	Doc  Doc
}

// shared components are the gateway's to define, because every service's operations use them
// alike: a fragment's copy never replaces the gateway's.
var shared = map[string]map[string]bool{
	"schemas":         {"Error": true},
	"securitySchemes": {"bearerAuth": true},
}

// Merge lays fragments over base: a service's path items replace the gateway's description of
// the same paths whole, its components are added, and two fragments that disagree about a
// component are an error for a person to settle. Then every operation gets the answers the
// gateway itself gives (401, 429, 503, and the Idempotency-Key header with its 409 on every
// POST), components nothing refers to any more are dropped, and
// the tag list covers every tag used.
func Merge(base Doc, fragments ...Fragment) error {
	paths := child(base, "paths")
	comps := child(base, "components")
	pathOwner := map[string]string{}
	compOwner := map[string]string{}
	var errs []error
	for _, f := range fragments {
		for p, item := range asMap(f.Doc["paths"]) {
			if prev, ok := pathOwner[p]; ok {
				errs = append(errs, fmt.Errorf("path %s is in both %s and %s", p, prev, f.Name))
				continue
			}
			pathOwner[p] = f.Name
			paths[p] = item
		}
		for kind, items := range asMap(f.Doc["components"]) {
			dst := child(comps, kind)
			for name, v := range asMap(items) {
				if shared[kind][name] {
					continue
				}
				id := kind + "/" + name
				if prev, ok := compOwner[id]; ok && !reflect.DeepEqual(dst[name], v) {
					errs = append(errs, fmt.Errorf("components/%s differs between %s and %s", id, prev, f.Name))
					continue
				}
				compOwner[id] = f.Name
				dst[name] = v
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	decorate(paths)
	prune(base)
	collectTags(base)
	return nil
}

// decorate adds the gateway's own answers to every listed operation that lacks them: 503 when
// the owning service is not answering (it replaces the 502 earlier documents gave), 401 and 429
// where the gateway refuses, and on every POST the Idempotency-Key header with its 409s.
func decorate(paths Doc) {
	for _, r := range routes.All() {
		op := asMap(asMap(paths[r.Template])[strings.ToLower(r.Method)])
		if op == nil || r.Owner == routes.Local {
			continue
		}
		rs := child(op, "responses")
		add := func(code, name string) {
			if _, ok := rs[code]; !ok {
				rs[code] = Doc{"$ref": "#/components/responses/" + name}
			}
		}
		if asMap(rs["502"])["$ref"] == "#/components/responses/BadGateway" {
			delete(rs, "502")
		}
		add("503", "ServiceUnavailable")
		if !r.Public {
			add("401", "Unauthorized")
		}
		switch {
		case r.Bucket == routes.CountFlagged:
			add("429", "SlowDown")
		case r.Bucket != routes.NoBucket || !r.Public:
			add("429", "RateLimited")
		}
		if r.Method == "POST" {
			addIdempotency(op, rs)
		}
		if !r.Public {
			addAccess(op, rs, r)
		}
	}
}

// Extensions carrying an operation's entry of contract/access's table.
const (
	ExtRole        = "x-tori-role"
	ExtScope       = "x-tori-scope"
	ExtSessionOnly = "x-tori-session-only"
)

// NoRole is x-tori-role's value for an operation that acts in no team (the caller's own
// tokens, sessions and account) or across the caller's teams (lists): any signed-in caller.
const NoRole = "none"

// accessNote opens the sentence addAccess ends a description with; a later merge replaces it,
// so a change of the table reaches the document.
const accessNote = "Requires "

// addAccess writes the operation's least role and scope from contract/access, which every
// service enforces, into the operation: as extensions for tools, as a sentence for readers,
// and the 403 a caller below them is answered. An authenticated route the table lacks gets
// nothing: its service answers it 404, and the test of the table says so.
func addAccess(op, rs Doc, r routes.Route) {
	a, ok := access.Find(r.Method, r.Template)
	if !ok {
		return
	}
	role := a.Role.String()
	if role == "" {
		role = NoRole
	}
	op[ExtRole] = role
	op[ExtScope] = a.Scope.String()
	delete(op, ExtSessionOnly)
	if a.SessionOnly {
		op[ExtSessionOnly] = true
	}
	desc, _ := op["description"].(string)
	if i := strings.LastIndex(desc, accessNote); i >= 0 && (i == 0 || strings.HasSuffix(desc[:i], "\n\n")) {
		desc = strings.TrimSuffix(desc[:i], "\n\n")
	}
	if desc != "" {
		desc += "\n\n"
	}
	op["description"] = desc + AccessSentence(a)
	if own, ok := rs["401"].(map[string]any); ok && own["$ref"] == nil {
		if d, _ := own["description"].(string); !strings.Contains(d, "token_expired") {
			own["description"] = d + expiredNote
		}
	}

	if !mayRefuse(a) {
		return
	}
	own, ok := rs["403"].(map[string]any)
	switch {
	case !ok:
		rs["403"] = Doc{"$ref": "#/components/responses/Forbidden"}
	case own["$ref"] == nil:
		if d, _ := own["description"].(string); !strings.Contains(d, access.CodeInsufficientRole) {
			own["description"] = d + forbiddenNote
		}
	}
}

// expiredNote is added to a service's own 401, which predates expiring tokens.
const expiredNote = " An API token past its end: `token_expired`."

// forbiddenNote is added to a service's own 403 so that it covers the table's refusals too.
const forbiddenNote = " Also `insufficient_role` (with `requiredRole`) or `insufficient_scope` (with `requiredScope`) when the caller's role in the team or the token's scope is below the operation's (`x-tori-role`, `x-tori-scope`), and `session_required` when only a session may call it."

// mayRefuse reports whether some valid caller is refused by the table: a role to have in
// the team, a scope above read (every token has read), or a session to hold.
func mayRefuse(a access.Route) bool {
	return a.Role > access.NoRole || a.Scope > access.Read || a.SessionOnly
}

// AccessSentence is the sentence an operation's description ends with, naming its entry of
// the access table: "Requires role developer and scope deploy."
func AccessSentence(a access.Route) string {
	var need []string
	if a.Role > access.NoRole {
		need = append(need, "role "+a.Role.String())
	}
	switch {
	case a.SessionOnly:
		need = append(need, "a session (an API token is refused with `session_required`)")
	case a.Scope == access.FullScope:
		need = append(need, "a session or a full API token (a scoped token is refused with `insufficient_scope`)")
	default:
		need = append(need, "scope "+a.Scope.String())
	}
	return accessNote + strings.Join(need, " and ") + "."
}

// idempotencyNote is added to a service's own 409 so that its description covers the
// gateway's too; its presence marks the 409 as done, so merging again changes nothing.
const idempotencyNote = " Also, with an `Idempotency-Key`: `idempotency_key_reused` (the key was used with another body, or its first answer was too large to keep) or `request_in_progress` (a request with the key is still running)."

func addIdempotency(op, rs Doc) {
	const ref = "#/components/parameters/IdempotencyKey"
	params, _ := op["parameters"].([]any)
	has := false
	for _, p := range params {
		if asMap(p)["$ref"] == ref {
			has = true
		}
	}
	if !has {
		op["parameters"] = append(params, Doc{"$ref": ref})
	}
	own, ok := rs["409"].(map[string]any)
	switch {
	case !ok:
		rs["409"] = Doc{"$ref": "#/components/responses/IdempotencyConflict"}
	case own["$ref"] == nil:
		if d, _ := own["description"].(string); !strings.Contains(d, "idempotency_key_reused") {
			own["description"] = d + idempotencyNote
		}
	}
}

// prune drops components that no path reaches, directly or through other components.
func prune(doc Doc) {
	comps := asMap(doc["components"])
	reached := map[string]bool{}
	var queue []string
	visit := func(v any) {
		walkRefs(v, func(ref string) {
			if id, ok := strings.CutPrefix(ref, "#/components/"); ok && !reached[id] {
				reached[id] = true
				queue = append(queue, id)
			}
		})
	}
	for k, v := range doc {
		if k != "components" {
			visit(v)
		}
	}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		kind, name, _ := strings.Cut(id, "/")
		visit(asMap(comps[kind])[name])
	}
	for kind, items := range comps {
		if kind == "securitySchemes" {
			continue // used by name, not by $ref
		}
		for name := range asMap(items) {
			if !reached[kind+"/"+name] {
				delete(asMap(items), name)
			}
		}
	}
}

// collectTags keeps the document's tag list in its order and appends tags it lacks.
func collectTags(doc Doc) {
	have := map[string]bool{}
	list, _ := doc["tags"].([]any)
	for _, t := range list {
		if n, ok := asMap(t)["name"].(string); ok {
			have[n] = true
		}
	}
	var missing []string
	for _, item := range asMap(doc["paths"]) {
		for _, op := range asMap(item) {
			tags, _ := asMap(op)["tags"].([]any)
			for _, t := range tags {
				if s, ok := t.(string); ok && !have[s] {
					have[s] = true
					missing = append(missing, s)
				}
			}
		}
	}
	sort.Strings(missing)
	for _, s := range missing {
		list = append(list, Doc{"name": s})
	}
	doc["tags"] = list
}

func walkRefs(v any, fn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "$ref" {
				fn(s)
				continue
			}
			walkRefs(e, fn)
		}
	case []any:
		for _, e := range x {
			walkRefs(e, fn)
		}
	}
}

// Refs lists every $ref in v, for checks that each resolves.
func Refs(v any) []string {
	var out []string
	walkRefs(v, func(s string) { out = append(out, s) })
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func child(m Doc, key string) Doc {
	c, ok := m[key].(map[string]any)
	if !ok {
		c = Doc{}
		m[key] = c
	}
	return c
}

// Encode renders doc the way the repository keeps it: indented, keys sorted, "<" and ">" as
// they are rather than escaped.
func Encode(doc Doc) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
