package catalog

import (
	"errors"
	"testing"
)

// The expected numbers are written out as docs/conventions.md prints them, not derived from
// the constants in plans.go, so a slip in either place fails here.
func TestCatalogMatchesConventions(t *testing.T) {
	want := []Plan{
		{Nestling, Prices{0, 0}, Limits{
			Apps: 3, CustomDomains: 0, ConcurrentDeploys: 1,
			UploadBytes: 104857600, DatabaseBytes: 268435456, DatabaseConnections: 5,
			BuildMinutes: 10, MinScale: 0, CPU: 0.25, LogRetentionDays: 1,
			ProcessTypes: 2, InstancesPerProcess: 1, InstancesTotal: 2, CronJobs: 2,
			CronMinIntervalMinutes: 60, CronTimeoutSeconds: 900, InstanceMemoryBytes: 268435456,
			Members: 3, AuditRetentionDays: 7,
			Previews: 1, PreviewMaxTTLHours: 24, Drains: 1, MetricsRetentionDays: 1,
		}},
		{Songbird, Prices{900, 9000}, Limits{
			Apps: 10, CustomDomains: 5, ConcurrentDeploys: 2,
			UploadBytes: 524288000, DatabaseBytes: 1073741824, DatabaseConnections: 20,
			BuildMinutes: 20, MinScale: 1, CPU: 1, LogRetentionDays: 7,
			ProcessTypes: 4, InstancesPerProcess: 3, InstancesTotal: 8, CronJobs: 10,
			CronMinIntervalMinutes: 10, CronTimeoutSeconds: 3600, InstanceMemoryBytes: 536870912,
			Members: 10, AuditRetentionDays: 30,
			Previews: 5, PreviewMaxTTLHours: 168, Drains: 3, MetricsRetentionDays: 7,
		}},
		{Flock, Prices{2900, 29000}, Limits{
			Apps: 50, CustomDomains: 50, ConcurrentDeploys: 5,
			UploadBytes: 1073741824, DatabaseBytes: 10737418240, DatabaseConnections: 100,
			BuildMinutes: 45, MinScale: 1, CPU: 2, LogRetentionDays: 30,
			ProcessTypes: 8, InstancesPerProcess: 10, InstancesTotal: 40, CronJobs: 50,
			CronMinIntervalMinutes: 1, CronTimeoutSeconds: 14400, InstanceMemoryBytes: 1073741824,
			Members: 50, AuditRetentionDays: 365,
			Previews: 20, PreviewMaxTTLHours: 720, Drains: 10, MetricsRetentionDays: 30,
		}},
	}
	got := All()
	if len(got) != len(want) {
		t.Fatalf("%d plans, want %d", len(got), len(want))
	}
	for i, w := range want {
		t.Run(string(w.Name), func(t *testing.T) {
			if got[i] != w {
				t.Fatalf("plan %d:\n got  %+v\n want %+v", i, got[i], w)
			}
			byName, err := Lookup(string(w.Name))
			if err != nil || byName != w {
				t.Fatalf("Lookup(%q) = %+v, %v", w.Name, byName, err)
			}
		})
	}
}

// Each process and cron limit grows from plan to plan (the minimum cron interval shrinks:
// a shorter gap is the more generous limit), and nestling keeps one instance per process type
// while still allowing a daily job.
func TestProcessLimitsGrowWithThePlan(t *testing.T) {
	limits := map[string]func(Limits) int64{
		"processTypes":        func(l Limits) int64 { return l.ProcessTypes },
		"instancesPerProcess": func(l Limits) int64 { return l.InstancesPerProcess },
		"instancesTotal":      func(l Limits) int64 { return l.InstancesTotal },
		"cronJobs":            func(l Limits) int64 { return l.CronJobs },
		// Negated so that "more generous" is "bigger" like the rest.
		"cronMinIntervalMinutes": func(l Limits) int64 { return -l.CronMinIntervalMinutes },
		"cronTimeoutSeconds":     func(l Limits) int64 { return l.CronTimeoutSeconds },
		"instanceMemoryBytes":    func(l Limits) int64 { return l.InstanceMemoryBytes },
		"members":                func(l Limits) int64 { return l.Members },
		"auditRetentionDays":     func(l Limits) int64 { return l.AuditRetentionDays },
		"previews":               func(l Limits) int64 { return l.Previews },
		"previewMaxTtlHours":     func(l Limits) int64 { return l.PreviewMaxTTLHours },
		"drains":                 func(l Limits) int64 { return l.Drains },
		"metricsRetentionDays":   func(l Limits) int64 { return l.MetricsRetentionDays },
	}
	plans := All()
	for name, of := range limits {
		t.Run(name, func(t *testing.T) {
			for i := 1; i < len(plans); i++ {
				if of(plans[i-1].Limits) >= of(plans[i].Limits) {
					t.Errorf("%s: %s %d is not tighter than %s %d", name,
						plans[i-1].Name, of(plans[i-1].Limits), plans[i].Name, of(plans[i].Limits))
				}
			}
			for _, p := range plans {
				if v := of(p.Limits); v == 0 {
					t.Errorf("%s: %s has 0", name, p.Name)
				}
			}
		})
	}
	nestling, _ := Lookup(string(Nestling))
	l := nestling.Limits
	if l.InstancesPerProcess != 1 {
		t.Errorf("nestling instancesPerProcess %d, want 1", l.InstancesPerProcess)
	}
	if l.CronJobs < 1 || l.CronMinIntervalMinutes > 24*60 {
		t.Errorf("nestling cannot run a daily job: cronJobs %d, cronMinIntervalMinutes %d", l.CronJobs, l.CronMinIntervalMinutes)
	}
	// A web=1 formation of a nestling app stays within its limits, as before processes.
	if l.ProcessTypes < 1 || l.InstancesTotal < 1 {
		t.Errorf("nestling cannot run one web instance: %+v", l)
	}
}

func TestAllReturnsACopy(t *testing.T) {
	first := All()
	first[0].Limits.Apps = 999
	if All()[0].Limits.Apps != 3 {
		t.Fatal("changing All's result changed the catalog")
	}
}

func TestEveryAccountStartsOnTheFreePlan(t *testing.T) {
	p, err := Lookup(string(Default))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != Nestling || p.Paid() || p.Limits.CustomDomains != 0 {
		t.Fatalf("default plan %+v: want free nestling without custom domains", p)
	}
}

func TestLookupAndPurchasable(t *testing.T) {
	cases := []struct {
		name        string
		lookupErr   error
		purchaseErr error
	}{
		{"nestling", nil, ErrNotPurchasable},
		{"songbird", nil, nil},
		{"flock", nil, nil},
		{"Flock", ErrUnknownPlan, ErrUnknownPlan},
		{"", ErrUnknownPlan, ErrUnknownPlan},
		{"eagle", ErrUnknownPlan, ErrUnknownPlan},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Lookup(tc.name); !errors.Is(err, tc.lookupErr) {
				t.Errorf("Lookup: got %v, want %v", err, tc.lookupErr)
			}
			p, err := Purchasable(tc.name)
			if !errors.Is(err, tc.purchaseErr) {
				t.Errorf("Purchasable: got %v, want %v", err, tc.purchaseErr)
			}
			if err == nil && string(p.Name) != tc.name {
				t.Errorf("Purchasable returned %q", p.Name)
			}
		})
	}
}

func TestIntervals(t *testing.T) {
	songbird, _ := Lookup("songbird")
	cases := []struct {
		in    string
		err   error
		price int64
	}{
		{"month", nil, 900},
		{"year", nil, 9000},
		{"monthly", ErrUnknownInterval, 0},
		{"Year", ErrUnknownInterval, 0},
		{"", ErrUnknownInterval, 0},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			i, err := ParseInterval(tc.in)
			if !errors.Is(err, tc.err) {
				t.Fatalf("ParseInterval(%q): got %v, want %v", tc.in, err, tc.err)
			}
			if err == nil && songbird.Prices.For(i) != tc.price {
				t.Fatalf("songbird per %s = %d cents, want %d", i, songbird.Prices.For(i), tc.price)
			}
		})
	}
}

func TestTerms(t *testing.T) {
	want := Terms{Currency: "EUR", TaxInclusive: true, Overage: "none"}
	if got := BillingTerms(); got != want {
		t.Fatalf("terms %+v, want %+v", got, want)
	}
}
