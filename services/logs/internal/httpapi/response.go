package httpapi

import (
	"strconv"
	"time"
	"unicode/utf8"

	"tori.dev/pkg/apitime"
	"tori.dev/services/logs/internal/app"
	"tori.dev/services/logs/internal/logs"
)

// appendPage appends the contract's log response for p to b:
//
//	{"retentionDays":…,"start":"…","end":"…","entries":[{"id":"…","timestamp":"…",
//	 "stream":"…","deployId":"…"|null,"message":"…"},…],"next":"…"|null}
//
// byte for byte what encoding/json makes of that shape (encode_test.go holds it to that),
// without the reflection, the per-entry strings and the intermediate structs: a page is
// up to 500 entries, and encoding them was the largest share of the route's own CPU.
// Ids are strings, like every id of the API, and because a bigint outgrows a JSON number's
// exact range in some clients.
func appendPage(b []byte, p app.Page) []byte {
	b = append(b, `{"retentionDays":`...)
	b = strconv.AppendInt(b, int64(p.RetentionDays), 10)
	b = append(b, `,"start":`...)
	b = appendTime(b, p.Start)
	b = append(b, `,"end":`...)
	b = appendTime(b, p.End)
	b = append(b, `,"entries":[`...)
	for i := range p.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendEntry(b, &p.Entries[i])
	}
	b = append(b, `],"next":`...)
	if p.Next != nil {
		b = appendString(b, p.Next.Encode())
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

func appendEntry(b []byte, e *logs.Entry) []byte {
	b = append(b, `{"id":"`...)
	b = strconv.AppendInt(b, e.ID, 10)
	b = append(b, `","timestamp":`...)
	b = appendTime(b, e.Timestamp)
	b = append(b, `,"stream":`...)
	b = appendString(b, string(e.Stream))
	b = append(b, `,"deployId":`...)
	if e.DeployID != "" {
		b = appendString(b, e.DeployID)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	return append(b, '}')
}

// appendTime appends t quoted, in the API's form (apitime). Years of four digits, which every stored
// entry has, are written directly; time.Format's layout interpretation was a tenth of the
// encoding.
func appendTime(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = apitime.Append(b, t)
		return append(b, '"')
	}
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond) // truncated, as the layout's .000 is
	b = append(b, '"',
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
	return b
}

// jsonSafe marks the bytes below utf8.RuneSelf that encoding/json writes as they are: it
// escapes control characters, the quote and the backslash, and, as it does by default (and
// Fiber's c.JSON did), <, > and & so the answer is safe to embed in HTML.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		safe[c] = true
	}
	for _, c := range `"\<>&` {
		safe[c] = false
	}
	return safe
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json writes one: short
// escapes for \b \f \n \r \t " and \, \u00XX for other control characters and <, >, &,
// \ufffd for each byte of invalid UTF-8, and \u2028 and \u2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Most of a log line needs no escape: pass it eight bytes at a time.
		for ; i+8 <= len(s); i += 8 {
			if unsafe8(load8(s[i : i+8])) {
				break
			}
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// load8 is s[0:8] as a little-endian word (one load).
func load8(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// unsafe8 marks with its lane's top bit the bytes of x that are not jsonSafe (a control
// character, ", \\, <, >, & or part of a multi-byte sequence), and returns whether any
// is. The tests for a byte below n and for a zero byte, (x - n·lsbs) &^ x, may mark the
// wrong lane but never miss one, and only whether any lane is marked is used.
func unsafe8(x uint64) bool {
	q, bs, lt, gt, amp := x^'"'*lsbs, x^'\\'*lsbs, x^'<'*lsbs, x^'>'*lsbs, x^'&'*lsbs
	return (x|(x-' '*lsbs)&^x|(q-lsbs)&^q|(bs-lsbs)&^bs|(lt-lsbs)&^lt|(gt-lsbs)&^gt|(amp-lsbs)&^amp)&msbs != 0
}
