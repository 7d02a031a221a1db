package apitime

import (
	"encoding/json"
	"math/rand/v2"
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

// The written digits are exactly what AppendFormat with Layout gives, at the edges of every
// field, in other zones, and over many times spread across the years the fast path takes.
func TestAppendIsAppendFormat(t *testing.T) {
	east, west := time.FixedZone("east", 14*3600), time.FixedZone("west", -12*3600-30*60)
	times := []time.Time{
		time.Unix(0, 0), {},
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, west),   // year 10000 in UTC: AppendFormat's form
		time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC), // before year 0: likewise
		time.Date(2024, 2, 29, 12, 0, 0, 1e6-1, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 5e8, east),
		time.Date(2026, 12, 31, 23, 59, 59, 999e6, west),
		time.Date(1999, 9, 9, 9, 9, 9, 9e6, time.UTC),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		times = append(times, time.Unix(rng.Int64N(253402300800), rng.Int64N(1e9)).In([]*time.Location{time.UTC, east, west}[rng.IntN(3)]))
	}
	for _, at := range times {
		want := at.UTC().AppendFormat([]byte("x"), Layout)
		if got := Append([]byte("x"), at); string(got) != string(want) {
			t.Fatalf("Append(%v) = %s, want %s", at, got, want)
		}
		if got := Format(at); got != string(want[1:]) {
			t.Fatalf("Format(%v) = %s, want %s", at, got, want[1:])
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	at := time.Date(2026, 11, 22, 2, 30, 0, 123456789, time.UTC)
	buf := make([]byte, 0, 64)
	for b.Loop() {
		buf = Append(buf[:0], at)
	}
}
