package logstreams

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

var ctx = context.Background()

func TestCapPerAccount(t *testing.T) {
	r := New(2, nil, nil)
	a1, err1 := r.Open(ctx, "acc", "t1", time.Time{})
	_, err2 := r.Open(ctx, "acc", "t2", time.Time{})
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := r.Open(ctx, "acc", "t3", time.Time{}); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third stream: %v, want ErrTooMany", err)
	}
	if _, err := r.Open(ctx, "other", "t4", time.Time{}); err != nil {
		t.Fatalf("another account's stream: %v", err)
	}
	a1.Release()
	a1.Release() // twice frees one place only
	if got := r.Count("acc"); got != 1 {
		t.Fatalf("count after release = %d, want 1", got)
	}
	if _, err := r.Open(ctx, "acc", "t5", time.Time{}); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}

// slowBody yields the parts written into it one Read at a time, then blocks until closed.
type slowBody struct {
	parts  chan string
	closed chan struct{}
}

func newSlowBody() *slowBody {
	return &slowBody{parts: make(chan string, 16), closed: make(chan struct{})}
}

func (b *slowBody) Read(p []byte) (int, error) {
	select {
	case s := <-b.parts:
		return copy(p, s), nil
	case <-b.closed:
		return 0, io.ErrUnexpectedEOF
	}
}

func (b *slowBody) Close() error {
	select {
	case <-b.closed:
	default:
		close(b.closed)
	}
	return nil
}

func readAll(t *testing.T, r io.Reader) string {
	t.Helper()
	done := make(chan string, 1)
	go func() { b, _ := io.ReadAll(r); done <- string(b) }()
	select {
	case s := <-done:
		return s
	case <-time.After(5 * time.Second):
		t.Fatal("the wrapped stream did not end")
		return ""
	}
}

func TestRevokeEndsOnlyThatTokensStreamsAfterWholeEvents(t *testing.T) {
	r := New(5, nil, nil)
	st, _ := r.Open(ctx, "acc", "tok", time.Time{})
	other, _ := r.Open(ctx, "acc", "other-tok", time.Time{})
	body := newSlowBody()
	w := st.Wrap(body)
	body.parts <- "id: 1\ndata: {\"message\":\"a\"}\n\nid: 2\nda" // the second event is half here
	// Wait until the first event is through before revoking.
	buf := make([]byte, 64)
	n, err := w.Read(buf)
	if err != nil || string(buf[:n]) != "id: 1\ndata: {\"message\":\"a\"}\n\n" {
		t.Fatalf("first read %q, %v", buf[:n], err)
	}
	r.Revoke("tok")
	rest := readAll(t, w)
	want := string(CloseEvent(ReasonTokenRevoked))
	if rest != want {
		t.Fatalf("after revoking: %q, want only the final event %q", rest, want)
	}
	if !strings.Contains(want, `"reason":"token_revoked"`) || !strings.HasPrefix(want, "event: close\n") {
		t.Fatalf("final event %q", want)
	}
	select {
	case <-body.closed:
	default:
		t.Fatal("the service's body was not closed")
	}
	_ = w.Close()
	if r.Count("acc") != 1 {
		t.Fatalf("count = %d: the revoked stream's place is not free, or the other's was taken", r.Count("acc"))
	}
	select {
	case reason := <-other.end:
		t.Fatalf("another token's stream was ended: %s", reason)
	default:
	}
}

func TestServiceEndPassesThrough(t *testing.T) {
	r := New(1, nil, nil)
	st, _ := r.Open(ctx, "acc", "tok", time.Time{})
	w := st.Wrap(io.NopCloser(strings.NewReader("event: close\ndata: {\"reason\":\"idle_timeout\"}\n\n")))
	if got := readAll(t, w); got != "event: close\ndata: {\"reason\":\"idle_timeout\"}\n\n" {
		t.Fatalf("got %q", got)
	}
	_ = w.Close()
	if r.Count("acc") != 0 {
		t.Fatal("place not freed after the body closed")
	}
}

func TestShutdownEndsEveryStreamAndLaterOnes(t *testing.T) {
	r := New(3, nil, nil)
	a, _ := r.Open(ctx, "a", "t1", time.Time{})
	wa := a.Wrap(newSlowBody())
	r.Shutdown()
	if got := readAll(t, wa); got != string(CloseEvent(ReasonShutdown)) {
		t.Fatalf("open stream got %q", got)
	}
	b, _ := r.Open(ctx, "b", "t2", time.Time{})
	if got := readAll(t, b.Wrap(newSlowBody())); got != string(CloseEvent(ReasonShutdown)) {
		t.Fatalf("stream opened during shutdown got %q", got)
	}
}

// A stream ends with token_expired when the token it was opened with expires, after the
// whole events before; a released stream's timer never fires.
func TestStreamEndsWhenItsTokenExpires(t *testing.T) {
	r := New(5, nil, nil)
	opened := time.Now()
	st, err := r.Open(ctx, "acc", "tok", opened.Add(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	body := newSlowBody()
	w := st.Wrap(body)
	body.parts <- "id: 1\ndata: {\"message\":\"a\"}\n\n"
	got := readAll(t, w)
	if want := "id: 1\ndata: {\"message\":\"a\"}\n\n" + string(CloseEvent(ReasonTokenExpired)); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if took := time.Since(opened); took < 300*time.Millisecond {
		t.Fatalf("ended after %s, before the token's end", took)
	}
	if !strings.Contains(string(CloseEvent(ReasonTokenExpired)), `"reason":"token_expired"`) {
		t.Fatal("the final event does not name token_expired")
	}
	_ = w.Close()
	if r.Count("acc") != 0 {
		t.Fatal("place not freed")
	}

	released, _ := r.Open(ctx, "acc", "tok2", time.Now().Add(50*time.Millisecond))
	released.Release()
	time.Sleep(100 * time.Millisecond) // past the token's end: nothing may be sent to it
	select {
	case reason := <-released.end:
		t.Fatalf("a released stream was ended with %s", reason)
	default:
	}
}

// A change of a person's roles ends every stream they opened, whichever token, with
// access_changed (a client reconnects and is checked anew); others' streams, and streams
// opened without a person, go on.
func TestEndUserEndsThatPersonsStreams(t *testing.T) {
	r := New(5, nil, nil)
	session, _ := r.OpenFor(ctx, "acc", "user-1", "tok-session", time.Time{})
	token, _ := r.OpenFor(ctx, "team", "user-1", "tok-api", time.Time{})
	other, _ := r.OpenFor(ctx, "acc", "user-2", "tok-other", time.Time{})
	anon, _ := r.Open(ctx, "acc", "tok-anon", time.Time{})
	r.EndUser("")
	r.EndUser("user-1")
	for _, st := range []*Stream{session, token} {
		select {
		case reason := <-st.end:
			if reason != ReasonAccessChanged {
				t.Fatalf("ended with %s", reason)
			}
		default:
			t.Fatal("a stream of the person was not ended")
		}
	}
	for _, st := range []*Stream{other, anon} {
		select {
		case reason := <-st.end:
			t.Fatalf("another stream was ended: %s", reason)
		default:
		}
	}
	if ev := string(CloseEvent(ReasonAccessChanged)); !strings.Contains(ev, `"reason":"access_changed"`) || !strings.Contains(ev, "reconnect") {
		t.Fatalf("final event %q", ev)
	}
}
