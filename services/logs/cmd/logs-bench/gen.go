package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"

	"tori.dev/services/logs/internal/logs"
)

// generator makes plausible log lines: a few apps far busier than the rest (Zipf-like), a
// daily rhythm peaking at noon UTC, and request-log-shaped messages of about 100 bytes.
type generator struct {
	rng     *rand.Rand
	apps    []string
	deploys []string
	appCDF  []float64
	hourCDF []float64
	t0      time.Time // start of the first hour
	hours   int
	counts  [][]int // per app, per hour
}

func newGenerator(nApps int, t0 time.Time, hours int, seed uint64) *generator {
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), t0: t0, hours: hours}
	sum := 0.0
	for i := range nApps {
		g.apps = append(g.apps, uuid.NewString())
		g.deploys = append(g.deploys, uuid.NewString())
		sum += 1 / float64(i+1)
		g.appCDF = append(g.appCDF, sum)
		g.counts = append(g.counts, make([]int, hours))
	}
	normalize(g.appCDF)
	sum = 0
	for h := range hours {
		hourOfDay := float64(t0.Add(time.Duration(h) * time.Hour).Hour())
		sum += 1 + 0.8*math.Cos(2*math.Pi*(hourOfDay-12)/24)
		g.hourCDF = append(g.hourCDF, sum)
	}
	normalize(g.hourCDF)
	return g
}

func normalize(cdf []float64) {
	total := cdf[len(cdf)-1]
	for i := range cdf {
		cdf[i] /= total
	}
}

func pick(cdf []float64, u float64) int {
	i := sort.SearchFloat64s(cdf, u)
	if i >= len(cdf) {
		i = len(cdf) - 1
	}
	return i
}

var streams = []logs.Stream{logs.StreamStdout, logs.StreamStdout, logs.StreamStdout, logs.StreamStderr, logs.StreamSystem}
var paths = []string{"/api/items/", "/api/orders/", "/healthz", "/static/app.js", "/api/users/", "/checkout/"}

// next returns one entry at a random app and moment of the span.
func (g *generator) next() logs.Entry {
	a := pick(g.appCDF, g.rng.Float64())
	h := pick(g.hourCDF, g.rng.Float64())
	g.counts[a][h]++
	ts := g.t0.Add(time.Duration(h)*time.Hour + time.Duration(g.rng.Int64N(int64(time.Hour))))
	return g.entry(a, ts)
}

// entry returns an entry of app a at ts, uncounted (for the ingest run).
func (g *generator) entry(a int, ts time.Time) logs.Entry {
	buf := make([]byte, 0, 160)
	buf = append(buf, "GET "...)
	buf = append(buf, paths[g.rng.IntN(len(paths))]...)
	buf = strconv.AppendInt(buf, g.rng.Int64N(1_000_000), 10)
	buf = append(buf, " 200 "...)
	buf = strconv.AppendFloat(buf, g.rng.Float64()*50, 'f', 2, 64)
	buf = append(buf, "ms request_id="...)
	buf = append(buf, uuid.NewString()...)
	buf = append(buf, " user_agent=Mozilla/5.0"...)
	return logs.Entry{
		AppID:     g.apps[a],
		DeployID:  g.deploys[a],
		Stream:    streams[g.rng.IntN(len(streams))],
		Timestamp: ts,
		Message:   string(buf),
	}
}

// busiestHour returns app a's fullest hour and its entry count. App 0 has the largest Zipf
// weight (twice the next app's), so its fullest hour is the fullest of all.
func (g *generator) busiestHour(a int) (hour int, n int) {
	for h, c := range g.counts[a] {
		if c > n {
			hour, n = h, c
		}
	}
	return hour, n
}
