package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/tests/e2e/harness"
)

// Live log streams are an account's wherever they are opened and last no longer than the
// token they were opened with: the cap (GATEWAY_LOG_STREAMS_PER_ACCOUNT, 10) counts every
// gateway's streams together (in the Redis the rate limits share), and a stream ends with a
// final token_expired event when its token's end comes.
func TestLogStreamsAreCappedAcrossGatewaysAndEndWithTheirToken(t *testing.T) {
	s, gatewayB := twoGatewayStack(t)

	t.Run("the eleventh stream is refused whichever gateway it tries", func(t *testing.T) {
		a := s.NewAccount(t, "stream-cap-two")
		slug := createApp(t, s, a.Token, "service")
		var open []*logStream
		for i := range 10 {
			base := s.Gateway
			if i%2 == 1 {
				base = gatewayB
			}
			ls := openLogStream(t, base, a.Token, slug, nil, "")
			if ls.Status != http.StatusOK {
				t.Fatalf("stream %d: %d %s", i+1, ls.Status, ls.Body)
			}
			open = append(open, ls)
		}
		for name, base := range map[string]string{"first gateway": s.Gateway, "second gateway": gatewayB} {
			ls := openLogStream(t, base, a.Token, slug, nil, "")
			var body struct{ Error, Message string }
			if err := json.Unmarshal([]byte(ls.Body), &body); ls.Status != http.StatusTooManyRequests || err != nil ||
				body.Error != "too_many_streams" || body.Message == "" {
				t.Fatalf("an eleventh stream on the %s: %d %s, want 429 too_many_streams", name, ls.Status, ls.Body)
			}
		}
		// A stream closed on one gateway gives its place to the other once that gateway
		// notices the client left: a write to the closed connection fails, and the first write
		// after the close usually still succeeds, so up to two of the logs service's 15 s
		// heartbeats.
		open[0].Close()
		harness.Eventually(t, 60*time.Second, "the freed place taken on the other gateway", func() bool {
			ls := openLogStream(t, gatewayB, a.Token, slug, nil, "")
			return ls.Status == http.StatusOK
		})
	})

	t.Run("a stream ends when its token expires", func(t *testing.T) {
		a := s.NewAccount(t, "stream-expiry")
		slug := createApp(t, s, a.Token, "service")
		// The session is made to end in a few seconds, as a 30-day one does at its end. Its
		// stream is opened on the gateway that has not seen the token, so that gateway learns
		// the new end from identity rather than from a copy cached before the change.
		ends := sessionEndsSoon(t, s, a.UserID, 10*time.Second)
		ls := openLogStream(t, gatewayB, a.Token, slug, nil, "")
		if ls.Status != http.StatusOK {
			t.Fatalf("open: %d %s", ls.Status, ls.Body)
		}
		ev := ls.next(t, 30*time.Second)
		if reason := closeReasonOf(t, ev); reason != "token_expired" {
			t.Fatalf("final event reason %q, want token_expired", reason)
		}
		// The API gives times to the millisecond.
		if ev.At.Before(ends.Add(-time.Millisecond)) {
			t.Fatalf("the stream ended %s before its token did", ends.Sub(ev.At))
		}
		if !ls.ended(5 * time.Second) {
			t.Fatal("the stream went on after its final event")
		}
		if again := openLogStream(t, gatewayB, a.Token, slug, nil, ""); again.Status != http.StatusUnauthorized {
			t.Fatalf("reopening with the expired token: %d %s", again.Status, again.Body)
		}
	})
}

// sessionEndsSoon sets the end of userID's live sessions to in from now (on the database's
// clock) and returns that end.
func sessionEndsSoon(t *testing.T, s *harness.Stack, userID string, in time.Duration) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.Env["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var end time.Time
	err = conn.QueryRow(ctx, `UPDATE identity.sessions SET expires_at = now() + make_interval(secs => $2)
		WHERE user_id = $1 AND revoked_at IS NULL RETURNING expires_at`, userID, in.Seconds()).Scan(&end)
	if err != nil {
		t.Fatalf("shorten the session: %v", err)
	}
	return end
}
