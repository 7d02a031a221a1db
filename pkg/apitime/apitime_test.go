package apitime

import (
	"encoding/json"
	"testing"
	"time"
)

func TestTheAPIFormIsUTCWithMilliseconds(t *testing.T) {
	prague := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC), "2026-11-22T02:30:00.000Z"},
		{time.Date(2026, 11, 22, 3, 30, 0, 0, prague), "2026-11-22T02:30:00.000Z"},
		{time.Date(2026, 11, 22, 2, 30, 0, 123456789, time.UTC), "2026-11-22T02:30:00.123Z"},
		{time.Date(2026, 11, 22, 2, 30, 0, 999999, time.UTC), "2026-11-22T02:30:00.000Z"},
	} {
		if got := Format(tc.in); got != tc.want {
			t.Errorf("Format(%v) = %s, want %s", tc.in, got, tc.want)
		}
		if got := string(Append([]byte("at "), tc.in)); got != "at "+tc.want {
			t.Errorf("Append(%v) = %s", tc.in, got)
		}
		got, err := json.Marshal(struct {
			At  Time  `json:"at"`
			Opt *Time `json:"opt"`
		}{Time(tc.in), OrNull(&tc.in)})
		if want := `{"at":"` + tc.want + `","opt":"` + tc.want + `"}`; err != nil || string(got) != want {
			t.Errorf("json: %s, %v; want %s", got, err, want)
		}
	}
	if OrNull(nil) != nil {
		t.Error("a missing time must be null")
	}
}
