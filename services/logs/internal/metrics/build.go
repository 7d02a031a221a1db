package metrics

import (
	"sort"

	"tori.dev/contract/appmetrics"
)

// RequestSeries is the requests metric: one series per status class seen in the window
// (1xx first), each a count per step, 0 where the class had no request.
func RequestSeries(g Grid, sums []StepSum) []Series {
	byClass := map[int][]Point{}
	for _, s := range sums {
		if s.Index < 0 || s.Index >= len(appmetrics.StatusClasses) || s.Sum == 0 {
			continue
		}
		pts, ok := byClass[s.Index]
		if !ok {
			pts = g.Zeros()
			byClass[s.Index] = pts
		}
		if i, ok := g.Index(s.T); ok {
			*pts[i].Value += float64(s.Sum)
		}
	}
	out := []Series{}
	for c, label := range appmetrics.StatusClasses {
		if pts, ok := byClass[c]; ok {
			out = append(out, Series{Labels: map[string]string{"status": label}, Points: pts})
		}
	}
	return out
}

// LatencySeries is the latency metric: p50, p95 and p99 per step of the step's summed
// histogram (Quantile), null where the step had no request.
func LatencySeries(g Grid, sums []StepSum) []Series {
	width := len(appmetrics.LatencyBoundsMillis) + 1
	hist := map[int][]int64{} // point index → summed buckets
	for _, s := range sums {
		i, ok := g.Index(s.T)
		if !ok || s.Index < 0 || s.Index >= width {
			continue
		}
		h, ok := hist[i]
		if !ok {
			h = make([]int64, width)
			hist[i] = h
		}
		h[s.Index] += s.Sum
	}
	out := make([]Series, len(Quantiles))
	for k, q := range Quantiles {
		out[k] = Series{Labels: map[string]string{"quantile": q.Label}, Points: g.Points()}
	}
	for i, h := range hist {
		for k, q := range Quantiles {
			if v, ok := Quantile(h, q.Q); ok {
				out[k].Points[i].Value = &v
			}
		}
	}
	return out
}

// UsageSeries is the cpu (average cores), memory (largest bytes) or instances (distinct
// instances seen) metric. cpu and memory have one series per instance, labelled with its
// process type and name, null where it was not sampled; instances one per process type,
// counting the type's instances in each step that has any sample of the app (0 for a type
// with none then), null in a step with no sample at all.
func UsageSeries(metric string, g Grid, rows []StepUsage) []Series {
	if metric == appmetrics.Instances {
		return instanceSeries(g, rows)
	}
	byInstance := map[string][]Point{}
	for _, r := range rows {
		pts, ok := byInstance[r.Instance]
		if !ok {
			pts = g.Points()
			byInstance[r.Instance] = pts
		}
		v := r.CPUCores
		if metric == appmetrics.Memory {
			v = float64(r.MemBytes)
		}
		Set(pts, g, r.T, v)
	}
	names := make([]string, 0, len(byInstance))
	for n := range byInstance {
		names = append(names, n)
	}
	SortInstances(names)
	out := make([]Series, 0, len(names))
	for _, n := range names {
		out = append(out, Series{Labels: map[string]string{"process": ProcessType(n), "instance": n}, Points: byInstance[n]})
	}
	return out
}

func instanceSeries(g Grid, rows []StepUsage) []Series {
	sampled := map[int]bool{}
	counts := map[string]map[int]int{} // type → point index → instances
	for _, r := range rows {
		i, ok := g.Index(r.T)
		if !ok {
			continue
		}
		sampled[i] = true
		t := ProcessType(r.Instance)
		if counts[t] == nil {
			counts[t] = map[int]int{}
		}
		counts[t][i]++ // rows are one per (step, instance): each counts once
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	sort.Strings(types)
	out := make([]Series, 0, len(types))
	for _, t := range types {
		pts := g.Points()
		for i := range sampled {
			v := float64(counts[t][i])
			pts[i].Value = &v
		}
		out = append(out, Series{Labels: map[string]string{"process": t}, Points: pts})
	}
	return out
}

// MemoryLimit is the memory chart's limit: the plan's instance memory when it names one,
// else the largest memory.max sampled in the window, else unknown (nil).
func MemoryLimit(p Plan, rows []StepUsage) *int64 {
	if p.InstanceMemoryBytes > 0 {
		v := p.InstanceMemoryBytes
		return &v
	}
	var most int64
	for _, r := range rows {
		most = max(most, r.LimitBytes)
	}
	if most == 0 {
		return nil
	}
	return &most
}
