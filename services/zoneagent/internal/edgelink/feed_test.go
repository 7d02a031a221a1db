package edgelink

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
	"tori.dev/services/zoneagent/internal/revision"
)

// The edge's table follows the runtime's: first the table as it was, then each change, each
// write returning once the edge has it.
func TestFeedKeepsTheEdgesTableInStep(t *testing.T) {
	runtimeEnd, edgeEnd := net.Pipe()
	runtime, mirror := edge.NewTable(), edge.NewTable()
	runtime.Set(edge.Route{AppID: "a1", Slug: "one", DeployID: "d1", Kind: revision.KindStatic})
	received := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Follow(ctx, edgeEnd, mirror, func() { close(received) }) }()
	feed := NewFeed(runtimeEnd, slog.New(slog.NewTextHandler(io.Discard, nil)))
	runtime.Follow(feed.Send)
	<-received
	if r, ok := mirror.Lookup("one"); !ok || r.DeployID != "d1" {
		t.Fatalf("snapshot: %+v %v", r, ok)
	}
	runtime.Set(edge.Route{AppID: "a2", Slug: "two", DeployID: "d2", Kind: revision.KindSource})
	// Set returned: the edge has it already.
	if r, ok := mirror.Lookup("two"); !ok || r.DeployID != "d2" {
		t.Fatalf("after Set: %+v %v", r, ok)
	}
	runtime.Replace([]edge.Route{{AppID: "a2", Slug: "two", DeployID: "d3"}}, map[string]string{"shop.example": "a2"})
	if r, ok := mirror.LookupHost("shop.example"); !ok || r.DeployID != "d3" {
		t.Fatalf("after Replace: %+v %v", r, ok)
	}
	if _, ok := mirror.Lookup("one"); ok {
		t.Fatal("Replace kept a dropped app")
	}
	now := time.Now()
	runtime.Pause(map[string]time.Time{"a2": now.Add(-time.Minute)})
	if !mirror.Paused("a2", now) {
		t.Fatal("after Pause: not paused")
	}
	runtime.PauseApp("a2", nil)
	if mirror.Paused("a2", now) {
		t.Fatal("after PauseApp(nil): still paused")
	}
	stops := now.Add(-time.Second)
	runtime.PauseApp("a2", &stops)
	if !mirror.Paused("a2", now) {
		t.Fatal("after PauseApp: not paused")
	}
	runtime.SetHost("www.shop.example", "a2")
	if r, ok := mirror.LookupHost("www.shop.example"); !ok || r.AppID != "a2" {
		t.Fatalf("after SetHost: %+v %v", r, ok)
	}
	runtime.SetHost("shop.example", "")
	if _, ok := mirror.LookupHost("shop.example"); ok {
		t.Fatal("after SetHost(\"\"): still routed")
	}
	runtime.Unset("a2")
	if _, ok := mirror.Lookup("two"); ok {
		t.Fatal("after Unset: still served")
	}
	runtime.Set(edge.Route{AppID: "a2", Slug: "two", DeployID: "d4", Kind: revision.KindSource})
	if r, ok := mirror.LookupHost("www.shop.example"); !ok || r.DeployID != "d4" {
		t.Fatalf("the hostname did not follow the app's route back: %+v %v", r, ok)
	}
	runtime.RemoveApp("a2")
	if _, ok := mirror.Lookup("two"); ok {
		t.Fatal("after RemoveApp: still served")
	}
	if _, ok := mirror.LookupHost("www.shop.example"); ok {
		t.Fatal("after RemoveApp: its hostname still served")
	}
	cancel()
	runtimeEnd.Close()
	if err := <-done; err != nil {
		t.Fatalf("follow: %v", err)
	}
}

// A write does not hang on an edge that does not ack: it waits AckTimeout, logs and goes on.
func TestFeedWriteIsBoundedWithoutAck(t *testing.T) {
	runtimeEnd, edgeEnd := net.Pipe()
	go io.Copy(io.Discard, edgeEnd) // reads, never acks
	var logs strings.Builder
	feed := NewFeed(runtimeEnd, slog.New(slog.NewTextHandler(&logs, nil)))
	t0 := time.Now()
	feed.Send(edge.Change{Op: edge.OpRemoveApp, AppID: "a1"})
	if took := time.Since(t0); took < AckTimeout || took > AckTimeout+time.Second {
		t.Fatalf("Send took %v, want about %v", took, AckTimeout)
	}
	if !strings.Contains(logs.String(), "no ack") {
		t.Fatalf("not logged: %s", logs.String())
	}
	// The change may be lost: the runtime is told once, to send the table whole again.
	if !feed.Unsure() || feed.Unsure() {
		t.Fatal("a change without an ack did not make the feed unsure, once")
	}
}

// The edge can only ack: anything else it writes is ignored, and a line past an ack's
// bound ends the runtime's reading (writes then time out rather than trust it).
func TestFeedIgnoresAnythingButAcks(t *testing.T) {
	runtimeEnd, edgeEnd := net.Pipe()
	feed := NewFeed(runtimeEnd, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go func() {
		buf := make([]byte, 4096)
		edgeEnd.Read(buf)
		edgeEnd.Write([]byte(`{"op":"set","route":{"AppID":"evil"}}` + "\n"))
		edgeEnd.Write([]byte(`{"ack":1}` + "\n"))
	}()
	t0 := time.Now()
	feed.Send(edge.Change{Op: edge.OpRemoveApp, AppID: "a1"})
	if took := time.Since(t0); took >= AckTimeout {
		t.Fatalf("the ack after a foreign line was not heard (%v)", took)
	}
}

// An unknown op from the runtime stops the edge's following (it would otherwise serve a
// table it does not understand).
func TestFollowRefusesAnUnknownChange(t *testing.T) {
	runtimeEnd, edgeEnd := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- Follow(context.Background(), edgeEnd, edge.NewTable(), func() {}) }()
	runtimeEnd.Write([]byte(`{"seq":1,"change":{"op":"exec"}}` + "\n"))
	if err := <-done; err == nil || !strings.Contains(err.Error(), "unknown table change") {
		t.Fatalf("follow: %v", err)
	}
}
