package deploy

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseProcesses(t *testing.T) {
	many := map[string]string{}
	for i := 0; i <= MaxProcessTypes; i++ {
		many[fmt.Sprintf("w%d", i)] = "run"
	}
	for _, tc := range []struct {
		name  string
		in    map[string]string
		start bool
		want  []Process
		field string // the ParamError's name when refused
	}{
		{name: "none", in: nil, want: nil},
		{name: "empty object", in: map[string]string{}, want: nil},
		{name: "web first then by name", in: map[string]string{"worker": "w", "clock": "c", "web": "s"},
			want: []Process{{"web", "s"}, {"clock", "c"}, {"worker", "w"}}},
		{name: "workers only", in: map[string]string{"worker": "w"}, want: []Process{{"worker", "w"}}},
		{name: "start beside workers", in: map[string]string{"worker": "w"}, start: true, want: []Process{{"worker", "w"}}},
		{name: "longest name", in: map[string]string{"a" + strings.Repeat("b", 29): "x"}, want: []Process{{"a" + strings.Repeat("b", 29), "x"}}},
		{name: "longest command", in: map[string]string{"web": strings.Repeat("x", MaxProcessCommandLen)},
			want: []Process{{"web", strings.Repeat("x", MaxProcessCommandLen)}}},
		{name: "start and web", in: map[string]string{"web": "s"}, start: true, field: "processes.web"},
		{name: "name too long", in: map[string]string{"a" + strings.Repeat("b", 30): "x"}, field: "processes"},
		{name: "uppercase", in: map[string]string{"Worker": "x"}, field: "processes"},
		{name: "leading digit", in: map[string]string{"1worker": "x"}, field: "processes"},
		{name: "dot", in: map[string]string{"web.1": "x"}, field: "processes"},
		{name: "empty name", in: map[string]string{"": "x"}, field: "processes"},
		{name: "empty command", in: map[string]string{"worker": ""}, field: "processes.worker"},
		{name: "command too long", in: map[string]string{"worker": strings.Repeat("x", MaxProcessCommandLen+1)}, field: "processes.worker"},
		{name: "too many types", in: many, field: "processes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcesses(tc.in, tc.start)
			if tc.field == "" {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %v, %v; want %v", got, err, tc.want)
				}
				return
			}
			var pe *ParamError
			if !errors.As(err, &pe) || pe.Name != tc.field || !errors.Is(err, ErrInvalidParameter) {
				t.Fatalf("got %v, %v; want a ParamError on %s", got, err, tc.field)
			}
		})
	}
}
