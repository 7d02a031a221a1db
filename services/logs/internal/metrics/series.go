package metrics

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Point is one [unixSeconds, value|null] of a series; a nil Value is null (no data).
type Point struct {
	T     int64
	Value *float64
}

// MarshalJSON writes the point as the API's two-element array.
func (p Point) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 32)
	b = append(b, '[')
	b = strconv.AppendInt(b, p.T, 10)
	b = append(b, ',')
	if p.Value == nil {
		b = append(b, "null"...)
	} else {
		v, err := json.Marshal(*p.Value)
		if err != nil {
			return nil, err
		}
		b = append(b, v...)
	}
	return append(b, ']'), nil
}

// Series is one labelled line of an answer.
type Series struct {
	Labels map[string]string `json:"labels"`
	Points []Point           `json:"points"`
}

// Result is the answer of a read.
type Result struct {
	Metric string
	Unit   string
	Step   int
	Start  time.Time // the first point's time
	End    time.Time
	Series []Series
	// Limit is the memory metric's limit in bytes (nil unknown); other metrics have none.
	Limit *int64
}

// Units of each metric.
var Units = map[string]string{
	"requests": "requests", "latency": "ms", "cpu": "cores", "memory": "bytes", "instances": "instances",
}

// Grid is the point times of a query: its series are built over it.
type Grid struct {
	First time.Time
	Step  int64
	N     int
}

// GridOf is q's grid.
func GridOf(q Query) Grid { return Grid{First: q.First(), Step: int64(q.Step), N: q.Points()} }

// Index is the point index of a step's start time t (Unix seconds), ok false outside the grid.
func (g Grid) Index(t int64) (int, bool) {
	d := t - g.First.Unix()
	if d < 0 || d%g.Step != 0 {
		return 0, false
	}
	i := int(d / g.Step)
	return i, i < g.N
}

// Points is the grid's points with every value null.
func (g Grid) Points() []Point {
	out := make([]Point, g.N)
	for i := range out {
		out[i].T = g.First.Unix() + int64(i)*g.Step
	}
	return out
}

// Zeros is the grid's points with every value 0.
func (g Grid) Zeros() []Point {
	out := g.Points()
	for i := range out {
		out[i].Value = new(float64)
	}
	return out
}

// Set puts v at the point of step t; a time off the grid is ignored.
func Set(points []Point, g Grid, t int64, v float64) {
	if i, ok := g.Index(t); ok {
		points[i].Value = &v
	}
}

// ProcessType is the type of an instance: web of web.1, preview of preview.<id>.
func ProcessType(instance string) string {
	t, _, _ := strings.Cut(instance, ".")
	return t
}

// SortInstances orders instance names by type, then numerically where both are numbers, so
// web.2 comes before web.10.
func SortInstances(names []string) {
	sort.Slice(names, func(i, j int) bool { return instanceLess(names[i], names[j]) })
}

func instanceLess(a, b string) bool {
	ta, ra, _ := strings.Cut(a, ".")
	tb, rb, _ := strings.Cut(b, ".")
	if ta != tb {
		return ta < tb
	}
	na, ea := strconv.Atoi(ra)
	nb, eb := strconv.Atoi(rb)
	if ea == nil && eb == nil && na != nb {
		return na < nb
	}
	return ra < rb
}
