package edge

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"tori.dev/services/zoneagent/internal/edgecount"
	"tori.dev/services/zoneagent/internal/revision"
)

// BenchmarkServeCounting is the request path's own cost of counting, off and on, with the
// real counter (edgecount): a service route whose handler writes a small answer into a
// writer that keeps nothing. bench-edge measures the whole edge.
// cd services/zoneagent && go test -run '^$' -bench BenchmarkServeCounting ./internal/edge/
func BenchmarkServeCounting(b *testing.B) {
	table := NewTable()
	table.Replace([]Route{{AppID: "app1", Slug: "svc", DeployID: "d1", Kind: revision.KindSource}}, nil)
	body := []byte("hello from edgeapp\n")
	svc := serviceFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
	req := httptest.NewRequest("GET", "/", nil)
	req.Host = "svc.apps.test"
	for _, c := range []struct {
		name    string
		counter Counter
	}{{"off", nil}, {"on", &edgecount.Counter{}}} {
		e := &Edge{Domain: "apps.test", Table: table, Services: svc, Counts: c.counter}
		b.Run(c.name, func(b *testing.B) {
			w := discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				e.ServeHTTP(w, req)
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header         { return w.h }
func (w discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w discardWriter) WriteHeader(int)             {}
