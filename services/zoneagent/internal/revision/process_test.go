package revision

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestCheckProcesses(t *testing.T) {
	for _, c := range []struct {
		name    string
		ps      []Process
		wantErr string // "" means accepted
	}{
		{"none", nil, ""},
		{"web and worker", []Process{{"web", "node s.js"}, {"worker", "node w.js"}}, ""},
		{"30 characters", []Process{{"a" + strings.Repeat("b-9", 9) + "cc", "x"}}, ""},
		{"31 characters", []Process{{"a" + strings.Repeat("b", 30), "x"}}, "is not a valid process name"},
		{"uppercase", []Process{{"Web", "x"}}, `"Web" is not a valid process name`},
		{"underscore", []Process{{"my_worker", "x"}}, `"my_worker"`},
		{"starts with a digit", []Process{{"1worker", "x"}}, `"1worker"`},
		{"empty name", []Process{{"", "x"}}, `"" is not a valid process name`},
		{"a dot", []Process{{"web.1", "x"}}, `"web.1"`},
		{"twice", []Process{{"worker", "a"}, {"worker", "b"}}, "worker is declared twice"},
		{"no command", []Process{{"worker", "  "}}, "worker has no command"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := CheckProcesses(c.ps)
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrBadProcess) || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want ErrBadProcess containing %q", err, c.wantErr)
			}
		})
	}
}

func TestProcessesOrWeb(t *testing.T) {
	got := ProcessesOrWeb([]Process{{"worker", "w"}, {"clock", "c"}, {"web", "s"}}, "ignored")
	want := []Process{{"web", "s"}, {"clock", "c"}, {"worker", "w"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want web first then by name %v", got, want)
	}
	if got := ProcessesOrWeb(nil, "npm start"); !reflect.DeepEqual(got, []Process{{"web", "npm start"}}) {
		t.Fatalf("none declared: %v", got)
	}
	if got := ProcessesOrWeb(nil, ""); !reflect.DeepEqual(got, []Process{{"web", ""}}) {
		t.Fatalf("an image declaring none: %v", got)
	}
}
