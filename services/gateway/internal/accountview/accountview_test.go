package accountview

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestViewsLiveTheirTimeAndNoLonger(t *testing.T) {
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	c := New(30 * time.Second)
	v := View{ContentType: "application/json", Body: []byte(`{"plan":"nestling"}`)}
	c.Put("a", v, now, c.Generation())
	if got, ok := c.Get("a", now.Add(23*time.Second)); !ok || string(got.Body) != string(v.Body) || got.ContentType != v.ContentType {
		t.Fatalf("fresh view: %+v %v", got, ok)
	}
	if _, ok := c.Get("a", now.Add(30*time.Second)); ok {
		t.Fatal("a view served at its end")
	}
	if _, ok := c.Get("b", now); ok {
		t.Fatal("another account's view served")
	}
	if n := c.Sweep(now.Add(31 * time.Second)); n != 1 {
		t.Fatalf("swept %d, want 1", n)
	}
}

// Views kept at the same moment end over the last fifth of their time, not all at once, so a
// burst of first reads does not come back to identity as one burst.
func TestViewsKeptTogetherExpireSpread(t *testing.T) {
	now := time.Date(2026, 11, 24, 6, 0, 0, 0, time.UTC)
	c := New(30 * time.Second)
	for i := range 200 {
		c.Put(strconv.Itoa(i), View{Body: []byte("{}")}, now, c.Generation())
	}
	alive := func(at time.Duration) int {
		n := 0
		for i := range 200 {
			if _, ok := c.Get(strconv.Itoa(i), now.Add(at)); ok {
				n++
			}
		}
		return n
	}
	if n := alive(24*time.Second - time.Millisecond); n != 200 {
		t.Fatalf("%d of 200 alive before the last fifth", n)
	}
	if n := alive(27 * time.Second); n == 0 || n == 200 {
		t.Fatalf("%d of 200 alive in the middle of the last fifth: not spread", n)
	}
	if n := alive(30 * time.Second); n != 0 {
		t.Fatalf("%d of 200 alive past their time", n)
	}
}

func TestAnEvictionBeatsAReadThatStartedBeforeIt(t *testing.T) {
	now := time.Now()
	c := New(time.Minute)
	for name, drop := range map[string]func(){
		"evict": func() { c.Evict("other") },
		"flush": c.Flush,
	} {
		gen := c.Generation() // a read of identity starts
		drop()                // a change is announced while it is in flight
		c.Put("a", View{Body: []byte("old")}, now, gen)
		if _, ok := c.Get("a", now); ok {
			t.Fatalf("%s: a view read before the change was kept", name)
		}
	}
	c.Put("a", View{Body: []byte("new")}, now, c.Generation())
	c.Evict("a")
	if _, ok := c.Get("a", now); ok {
		t.Fatal("an evicted view served")
	}
}

func TestNothingKeptWithoutATimeOrOverTheSize(t *testing.T) {
	now := time.Now()
	off := New(0)
	off.Put("a", View{Body: []byte("{}")}, now, off.Generation())
	if _, ok := off.Get("a", now); ok {
		t.Fatal("kept with a ttl of 0")
	}
	c := New(time.Minute)
	c.Put("a", View{Body: []byte(strings.Repeat("x", MaxBody+1))}, now, c.Generation())
	if _, ok := c.Get("a", now); ok {
		t.Fatal("a body over MaxBody kept")
	}
}
