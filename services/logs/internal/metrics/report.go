package metrics

import "time"

// Report is one zone report (zonev1.AppMetrics) as the service keeps it: one minute's request
// counts of some apps (from an edge) and instance use (from a runtime).
type Report struct {
	ID     string // report_id: a report is kept once per app
	Minute time.Time
	// Zone is the zone whose agent published the report, as the broker vouches for it.
	Zone     string
	Requests []Requests
	Usage    []Usage
}

// Requests is one app's request counts over (part of) a minute.
type Requests struct {
	AppID string
	// Counts by status class, index i is appmetrics.StatusClasses[i].
	Counts []int64
	// Buckets of the latency histogram over appmetrics.LatencyBoundsMillis plus overflow.
	Buckets   []int64
	SumMillis float64
}

// Usage is one instance's use over a minute.
type Usage struct {
	AppID      string
	Instance   string // web.1, preview.<id>
	CPUCores   float64
	MemBytes   int64
	LimitBytes int64
}

// AppIDs are the distinct apps a report names.
func (r Report) AppIDs() []string {
	seen := map[string]bool{}
	var out []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, q := range r.Requests {
		add(q.AppID)
	}
	for _, u := range r.Usage {
		add(u.AppID)
	}
	return out
}

// Keep is the report with only the apps keep accepts.
func (r Report) Keep(keep func(appID string) bool) Report {
	out := r
	out.Requests, out.Usage = nil, nil
	for _, q := range r.Requests {
		if keep(q.AppID) {
			out.Requests = append(out.Requests, q)
		}
	}
	for _, u := range r.Usage {
		if keep(u.AppID) {
			out.Usage = append(out.Usage, u)
		}
	}
	return out
}

// Empty reports whether the report holds nothing to store.
func (r Report) Empty() bool { return len(r.Requests) == 0 && len(r.Usage) == 0 }

// Plan is the metrics' part of an account's plan. Version ranks copies as logs.Plan's.
type Plan struct {
	AccountID     string
	RetentionDays int
	// InstanceMemoryBytes is the plan's instance memory, the memory chart's limit; 0 unknown.
	InstanceMemoryBytes int64
	Version             int64
}

// StepSum is the sum over one step (T its start, Unix seconds) of one index of a report's
// array: a status class's count or a latency bucket's.
type StepSum struct {
	T     int64
	Index int
	Sum   int64
}

// StepUsage is one instance's use over one step (T its start, Unix seconds).
type StepUsage struct {
	T          int64
	Instance   string
	CPUCores   float64 // average
	MemBytes   int64   // largest
	LimitBytes int64   // largest
}
