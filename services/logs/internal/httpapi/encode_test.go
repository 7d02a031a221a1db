package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"tori.dev/contract/apitime"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

// refPage is the contract's log response written out field by field, with every value
// already a string: the reference the route's encoder must match byte for byte (the answer's
// bytes did not change when the hand-written encoder went).
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
	Process   *string `json:"process"`
}

func refEncode(t testing.TB, p usecase.Page) []byte {
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
		if e.Process != "" {
			pr := e.Process
			r.Entries[i].Process = &pr
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

func encoded(t testing.TB, p usecase.Page) []byte {
	t.Helper()
	var got []byte
	if err := encodePage(p, func(b []byte) { got = bytes.Clone(b) }); err != nil {
		t.Fatal(err)
	}
	return got
}

func checkSame(t *testing.T, p usecase.Page) {
	t.Helper()
	want := refEncode(t, p)
	if got := encoded(t, p); !bytes.Equal(got, want) {
		t.Fatalf("encodePage differs from the reference\n got %s\nwant %s", got, want)
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

func TestEncodePageMatchesTheReference(t *testing.T) {
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
	checkSame(t, usecase.Page{RetentionDays: 30, Start: ts.Add(-time.Hour), End: ts, Entries: entries,
		Next: &logs.Cursor{Timestamp: ts, ID: 99}})
	// No entries is an empty array, not null; no next is null; times in any zone are UTC.
	checkSame(t, usecase.Page{RetentionDays: 1, Start: ts.In(local), End: ts.Add(time.Hour).In(local), Entries: []logs.Entry{}})
	checkSame(t, usecase.Page{RetentionDays: 7, Start: ts, End: ts})
	// Millisecond truncation, and years of other than four digits.
	for _, at := range []time.Time{
		time.Date(2026, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 1_000_000, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.UnixMicro(1_795_000_000_123_456).In(local),
	} {
		checkSame(t, usecase.Page{RetentionDays: 30, Start: at, End: at, Entries: []logs.Entry{{ID: 1, Timestamp: at, Stream: logs.StreamStderr, Message: "x"}}})
	}
}

// benchPage is a full page of request-log-shaped lines, like the logs benchmark's.
func benchPage() usecase.Page {
	ts := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	p := usecase.Page{RetentionDays: 30, Start: ts, End: ts.Add(time.Hour), Next: &logs.Cursor{Timestamp: ts, ID: 500}}
	for i := range 500 {
		p.Entries = append(p.Entries, logs.Entry{
			ID: int64(9_000_000 + i), Timestamp: ts.Add(time.Duration(i) * 7 * time.Millisecond), Stream: logs.StreamStdout,
			DeployID: "0b7c2b8e-95a4-4c0e-9d5a-0f6e3b1c2d4e", Process: "web." + strconv.Itoa(i%3+1),
			Message: "GET /api/orders/" + strconv.Itoa(i*7919) + " 200 12.34ms request_id=5d1f7a3c-2b4e-4f6a-8c9d-0e1f2a3b4c5d user_agent=Mozilla/5.0",
		})
	}
	return p
}

// The keys of the page and of each entry are exactly the contract's, with their JSON types.
func TestEncodedPageHasTheContractsFields(t *testing.T) {
	p := benchPage()
	p.Entries[1].DeployID, p.Entries[1].Process = "", ""
	var page map[string]any
	if err := json.Unmarshal(encoded(t, p), &page); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "page", page, map[string]string{"retentionDays": "number", "start": "string", "end": "string", "entries": "array", "next": "string"})
	entries := page["entries"].([]any)
	if len(entries) != len(p.Entries) {
		t.Fatalf("%d entries, want %d", len(entries), len(p.Entries))
	}
	checkKeys(t, "entry", entries[0].(map[string]any), map[string]string{"id": "string", "timestamp": "string", "stream": "string", "deployId": "string", "message": "string", "process": "string"})
	checkKeys(t, "entry without a deploy", entries[1].(map[string]any), map[string]string{"id": "string", "timestamp": "string", "stream": "string", "deployId": "null", "message": "string", "process": "null"})
	if got := entries[0].(map[string]any)["id"]; got != "9000000" {
		t.Errorf("id = %v, want \"9000000\"", got)
	}
	if got := page["start"]; got != "2026-11-22T12:00:00.000Z" {
		t.Errorf("start = %v", got)
	}

	// A page encoded after a larger one carries nothing of it (the encoder is pooled).
	encoded(t, benchPage())
	var small map[string]any
	if err := json.Unmarshal(encoded(t, usecase.Page{RetentionDays: 1}), &small); err != nil {
		t.Fatal(err)
	}
	checkKeys(t, "empty page", small, map[string]string{"retentionDays": "number", "start": "string", "end": "string", "entries": "array", "next": "null"})
	if n := len(small["entries"].([]any)); n != 0 {
		t.Errorf("empty page has %d entries", n)
	}
}

func checkKeys(t *testing.T, what string, got map[string]any, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s has keys %v, want %v", what, got, want)
	}
	for k, typ := range want {
		v, ok := got[k]
		if !ok {
			t.Errorf("%s lacks %q", what, k)
			continue
		}
		var have string
		switch v.(type) {
		case nil:
			have = "null"
		case string:
			have = "string"
		case float64:
			have = "number"
		case []any:
			have = "array"
		default:
			have = "other"
		}
		if have != typ {
			t.Errorf("%s: %q is %s, want %s", what, k, have, typ)
		}
	}
}

func BenchmarkEncodePage(b *testing.B) {
	p := benchPage()
	var n int
	b.ReportAllocs()
	for b.Loop() {
		if err := encodePage(p, func(out []byte) { n = len(out) }); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n))
}
