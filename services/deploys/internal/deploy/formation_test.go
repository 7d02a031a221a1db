package deploy

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestNextFormation(t *testing.T) {
	then := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := then.Add(time.Hour)
	entry := func(typ, cmd string, q, running int64, at time.Time) FormationEntry {
		return FormationEntry{Type: typ, Command: cmd, Quantity: q, Running: running, UpdatedAt: at}
	}
	for _, tc := range []struct {
		name     string
		current  []FormationEntry
		declared []Process
		want     []FormationEntry
	}{
		{name: "first deploy: web at 1, others at 0",
			declared: []Process{{"web", "serve"}, {"clock", "tick"}, {"worker", "work"}},
			want:     []FormationEntry{entry("web", "serve", 1, 0, now), entry("clock", "tick", 0, 0, now), entry("worker", "work", 0, 0, now)}},
		{name: "first deploy without web",
			declared: []Process{{"worker", "work"}},
			want:     []FormationEntry{entry("worker", "work", 0, 0, now)}},
		{name: "declared types keep their quantities; changed commands are stamped",
			current:  []FormationEntry{entry("web", "serve", 3, 3, then), entry("worker", "work", 2, 2, then)},
			declared: []Process{{"web", "serve"}, {"worker", "work --fast"}},
			want:     []FormationEntry{entry("web", "serve", 3, 0, then), entry("worker", "work --fast", 2, 0, now)}},
		{name: "undeclared types go, new ones start at 0",
			current:  []FormationEntry{entry("web", "serve", 2, 2, then), entry("worker", "work", 1, 1, then)},
			declared: []Process{{"web", "serve"}, {"mailer", "mail"}},
			want:     []FormationEntry{entry("web", "serve", 2, 0, then), entry("mailer", "mail", 0, 0, now)}},
		{name: "web scaled to 0 stays at 0",
			current:  []FormationEntry{entry("web", "serve", 0, 0, then), entry("worker", "work", 1, 1, then)},
			declared: []Process{{"web", "serve"}, {"worker", "work"}},
			want:     []FormationEntry{entry("web", "serve", 0, 0, then), entry("worker", "work", 1, 0, then)}},
		{name: "web dropped then declared again starts at 1",
			current:  []FormationEntry{entry("worker", "work", 1, 1, then)},
			declared: []Process{{"web", "serve"}, {"worker", "work"}},
			want:     []FormationEntry{entry("web", "serve", 1, 0, now), entry("worker", "work", 1, 0, then)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := NextFormation(tc.current, tc.declared, now)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestScale(t *testing.T) {
	then := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now := then.Add(time.Hour)
	current := []FormationEntry{
		{Type: "web", Command: "serve", Quantity: 1, Running: 1, UpdatedAt: then},
		{Type: "worker", Command: "work", Quantity: 0, UpdatedAt: then},
		{Type: "clock", Command: "tick", Quantity: 0, UpdatedAt: then},
	}
	nestling := FormationLimits{Plan: "nestling", ProcessTypes: 2, InstancesPerProcess: 1, InstancesTotal: 2}
	songbird := FormationLimits{Plan: "songbird", ProcessTypes: 4, InstancesPerProcess: 3, InstancesTotal: 4}
	over := []FormationEntry{{Type: "web", Quantity: 3, UpdatedAt: then}, {Type: "worker", Quantity: 2, UpdatedAt: then}}
	type want struct {
		quantities map[string]int64
		grew       bool
		err        error // a sentinel the error wraps, or nil
		limit      int64
		unknown    string
	}
	for _, tc := range []struct {
		name    string
		current []FormationEntry
		updates []ScaleUpdate
		limits  FormationLimits
		want    want
	}{
		{"worker to 1 on nestling", current, []ScaleUpdate{{"worker", 1}}, nestling,
			want{quantities: map[string]int64{"web": 1, "worker": 1, "clock": 0}, grew: true}},
		{"worker to 2 on nestling", current, []ScaleUpdate{{"worker", 2}}, nestling,
			want{err: ErrInstancesPerProcess, limit: 1}},
		{"three types on nestling", current, []ScaleUpdate{{"worker", 1}, {"clock", 1}}, nestling,
			want{err: ErrInstancesTotal, limit: 2}},
		{"three types on a plan allowing two", current, []ScaleUpdate{{"worker", 1}, {"clock", 1}},
			FormationLimits{Plan: "x", ProcessTypes: 2, InstancesPerProcess: 5, InstancesTotal: 10},
			want{err: ErrProcessTypes, limit: 2}},
		{"total over songbird", current, []ScaleUpdate{{"web", 3}, {"worker", 2}}, songbird,
			want{err: ErrInstancesTotal, limit: 4}},
		{"web to 0", current, []ScaleUpdate{{"web", 0}}, nestling,
			want{quantities: map[string]int64{"web": 0, "worker": 0, "clock": 0}}},
		{"same quantity", current, []ScaleUpdate{{"web", 1}}, nestling,
			want{quantities: map[string]int64{"web": 1, "worker": 0, "clock": 0}}},
		{"lowering an over-limit formation", over, []ScaleUpdate{{"web", 2}}, nestling,
			want{quantities: map[string]int64{"web": 2, "worker": 2}}},
		{"raising on an over-limit formation", over, []ScaleUpdate{{"web", 1}, {"worker", 3}}, nestling,
			want{err: ErrInstancesPerProcess, limit: 1}},
		{"unknown type", current, []ScaleUpdate{{"worker", 1}, {"mailer", 1}}, songbird, want{unknown: "mailer"}},
		{"unknown type to 0", current, []ScaleUpdate{{"mailer", 0}}, songbird, want{unknown: "mailer"}},
		{"no updates", current, nil, songbird, want{err: ErrInvalidParameter}},
		{"duplicate type", current, []ScaleUpdate{{"worker", 1}, {"worker", 0}}, songbird, want{err: ErrInvalidParameter}},
		{"negative", current, []ScaleUpdate{{"worker", 1}, {"web", -1}}, songbird, want{err: ErrInvalidParameter}},
		{"too many", current, make([]ScaleUpdate, MaxScaleUpdates+1), songbird, want{err: ErrInvalidParameter}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]FormationEntry(nil), tc.current...)
			got, grew, err := Scale(tc.current, tc.updates, tc.limits, now)
			if !reflect.DeepEqual(tc.current, before) {
				t.Fatalf("Scale changed its input: %+v", tc.current)
			}
			switch {
			case tc.want.unknown != "":
				var ue *UnknownProcessTypeError
				if !errors.As(err, &ue) || ue.Type != tc.want.unknown {
					t.Fatalf("got %v, want unknown type %s", err, tc.want.unknown)
				}
				return
			case tc.want.err != nil:
				if !errors.Is(err, tc.want.err) || got != nil {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want.err)
				}
				var le *LimitError
				if tc.want.limit != 0 && (!errors.As(err, &le) || le.Limit != tc.want.limit || le.Plan != tc.limits.Plan) {
					t.Fatalf("limit error %v, want limit %d on %s", err, tc.want.limit, tc.limits.Plan)
				}
				return
			}
			if err != nil || grew != tc.want.grew {
				t.Fatalf("err %v grew %v, want grew %v", err, grew, tc.want.grew)
			}
			q := map[string]int64{}
			for i, e := range got {
				q[e.Type] = e.Quantity
				changed := e.Quantity != before[i].Quantity
				if changed != e.UpdatedAt.Equal(now) {
					t.Errorf("%s: quantity %d→%d, updatedAt %v", e.Type, before[i].Quantity, e.Quantity, e.UpdatedAt)
				}
			}
			if !reflect.DeepEqual(q, tc.want.quantities) {
				t.Fatalf("quantities %v, want %v", q, tc.want.quantities)
			}
		})
	}
}
