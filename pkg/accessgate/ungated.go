package accessgate

import (
	"reflect"
	"runtime"
	"strings"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/access"
)

// checkName is the code name of a gate's Check as a handler: a method value's code is the
// same for every gate.
var checkName = handlerName((*Gate)(nil).Check)

func handlerName(h fiber.Handler) string {
	return runtime.FuncForPC(reflect.ValueOf(h).Pointer()).Name()
}

// Ungated lists the /api routes of app without a gate's Check before their last handler, or
// missing from the access table (which the gate answers 404), and how many /api routes it
// walked: each service's tests hold their router to it, so a route cannot ship unguarded.
func Ungated(app *fiber.App) (bad []string, walked int) {
	for _, r := range app.GetRoutes(true) {
		if !strings.HasPrefix(r.Path, "/api/") {
			continue
		}
		walked++
		name := r.Method + " " + r.Path
		if _, ok := access.Find(r.Method, r.Path); !ok {
			bad = append(bad, name+" (not in the access table)")
			continue
		}
		gated := false
		for _, h := range r.Handlers[:len(r.Handlers)-1] {
			gated = gated || handlerName(h) == checkName
		}
		if !gated {
			bad = append(bad, name)
		}
	}
	return bad, walked
}
