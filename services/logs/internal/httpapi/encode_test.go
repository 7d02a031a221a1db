package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/apitime"
	"tori.dev/services/logs/internal/app"
	"tori.dev/services/logs/internal/logs"
)

// refPage is the contract's log response as encoding/json writes it: the reference the
// appending encoder must match byte for byte.
type refPage struct {
	RetentionDays int        `json:"retentionDays"`
	Start         string     `json:"start"`
	End           string     `json:"end"`
	Entries       []refEntry `json:"entries"`
	Next          *string    `json:"next"`
}

type refEntry struct {
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Stream    string  `json:"stream"`
	DeployID  *string `json:"deployId"`
	Message   string  `json:"message"`
}

func refEncode(t testing.TB, p app.Page) []byte {
	t.Helper()
	r := refPage{
		RetentionDays: p.RetentionDays,
		Start:         p.Start.UTC().Format(apitime.Layout),
		End:           p.End.UTC().Format(apitime.Layout),
		Entries:       make([]refEntry, len(p.Entries)),
	}
	for i, e := range p.Entries {
		r.Entries[i] = refEntry{ID: strconv.FormatInt(e.ID, 10), Timestamp: e.Timestamp.UTC().Format(apitime.Layout), Stream: string(e.Stream), Message: e.Message}
		if e.DeployID != "" {
			d := e.DeployID
			r.Entries[i].DeployID = &d
		}
	}
	if p.Next != nil {
		n := p.Next.Encode()
		r.Next = &n
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func checkSame(t *testing.T, p app.Page) {
	t.Helper()
	want := refEncode(t, p)
	if got := appendPage(nil, p); !bytes.Equal(got, want) {
		t.Fatalf("appendPage differs from encoding/json\n got %s\nwant %s", got, want)
	}
}

// Messages are whatever a customer's app printed: every escape encoding/json makes must be
// made the same way.
var awkwardMessages = []string{
	"",
	"GET /api/items/42 200 3.14ms",
	`quote " backslash \ slash /`,
	"<script>alert('x') & more</script>",
	"tab\tnewline\ncarriage\rbackspace\bformfeed\f",
	"\x00\x01\x1f\x7f",
	"héllo wörld ✓ 日本語 🎉",
	"line\u2028separator\u2029paragraph",
	"bad utf-8: \xff\xfe then \xc3 alone, \xe2\x82 cut",
	"\xed\xa0\x80 surrogate half",
	strings.Repeat("long line ", 2000),
}

func TestAppendPageMatchesEncodingJSON(t *testing.T) {
	ts := time.Date(2026, 11, 22, 9, 8, 7, 654_321_000, time.UTC)
	var entries []logs.Entry
	for i, m := range awkwardMessages {
		e := logs.Entry{ID: int64(i+1) * 1_000_003, Timestamp: ts.Add(time.Duration(i) * time.Millisecond), Stream: logs.Streams[i%len(logs.Streams)], Message: m}
		if i%2 == 0 {
			e.DeployID = "0b7c2b8e-95a4-4c0e-9d5a-0f6e3b1c2d4e"
		}
		entries = append(entries, e)
	}
	local := time.FixedZone("UTC+5", 5*3600)
	checkSame(t, app.Page{RetentionDays: 30, Start: ts.Add(-time.Hour), End: ts, Entries: entries,
		Next: &logs.Cursor{Timestamp: ts, ID: 99}})
	// No entries is an empty array, not null; no next is null; times in any zone are UTC.
	checkSame(t, app.Page{RetentionDays: 1, Start: ts.In(local), End: ts.Add(time.Hour).In(local), Entries: []logs.Entry{}})
	checkSame(t, app.Page{RetentionDays: 7, Start: ts, End: ts})
	// Millisecond truncation and edges of the four-digit fast path, and beyond it.
	for _, at := range []time.Time{
		time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 1_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.UnixMicro(1_795_000_000_123_456).In(local),
	} {
		checkSame(t, app.Page{RetentionDays: 30, Start: at, End: at, Entries: []logs.Entry{{ID: 1, Timestamp: at, Stream: logs.StreamStderr, Message: "x"}}})
	}
}

func FuzzAppendString(f *testing.F) {
	for _, m := range awkwardMessages {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendString(%q) = %s, encoding/json %s", s, got, want)
		}
	})
}

// benchPage is a full page of request-log-shaped lines, like the logs benchmark's.
func benchPage() app.Page {
	ts := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p := app.Page{RetentionDays: 30, Start: ts, End: ts.Add(time.Hour), Next: &logs.Cursor{Timestamp: ts, ID: 500}}
	for i := range 500 {
		p.Entries = append(p.Entries, logs.Entry{
			ID: int64(9_000_000 + i), Timestamp: ts.Add(time.Duration(i) * 7 * time.Millisecond), Stream: logs.StreamStdout,
			DeployID: "0b7c2b8e-95a4-4c0e-9d5a-0f6e3b1c2d4e",
			Message:  "GET /api/orders/" + strconv.Itoa(i*7919) + " 200 12.34ms request_id=5d1f7a3c-2b4e-4f6a-8c9d-0e1f2a3b4c5d user_agent=Mozilla/5.0",
		})
	}
	return p
}

func BenchmarkAppendPage(b *testing.B) {
	p := benchPage()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendPage(buf[:0], p)
	}
	b.SetBytes(int64(len(buf)))
}

// BenchmarkEncodingJSONPage is what the route did before: structs, then encoding/json.
func BenchmarkEncodingJSONPage(b *testing.B) {
	p := benchPage()
	b.ReportAllocs()
	for b.Loop() {
		refEncode(b, p)
	}
}

func BenchmarkAppendString(b *testing.B) {
	s := benchPage().Entries[7].Message
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		buf = appendString(buf[:0], s)
	}
}

// Every byte that needs an escape is found in every lane of the eight-byte scan.
func TestAppendStringFindsEscapesInEveryLane(t *testing.T) {
	base := strings.Repeat("abcdefgh", 5)
	for _, special := range []string{`"`, `\`, "<", ">", "&", "\x00", "\x1f", " ", "~", "\x7f", "\x80", "é", "\u2028", "\u2029", "\xff"} {
		for p := 0; p <= len(base); p++ {
			s := base[:p] + special + base[p:]
			want, _ := json.Marshal(s)
			if got := appendString(nil, s); !bytes.Equal(got, want) {
				t.Fatalf("appendString(%q) = %s, encoding/json %s", s, got, want)
			}
		}
	}
}
