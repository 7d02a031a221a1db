package edgelink

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// A wake may name a preview: the runtime is asked for the preview's instance, not the app's;
// a removed preview is ErrGone; a preview id that is not one is refused before the runtime
// hears of it.
func TestLinkWakesAPreview(t *testing.T) {
	c, rt, _ := startLink(t, self)
	ctx := context.Background()
	ids, err := c.WakePreview(ctx, "ok", "abc123")
	if err != nil || !slices.Equal(ids, []string{"inst-ok-abc123"}) {
		t.Fatalf("preview wake: %v %v", ids, err)
	}
	if _, err := c.WakePreview(ctx, "ok", "gone00"); !errors.Is(err, ErrGone) {
		t.Fatalf("removed preview: %v, want ErrGone", err)
	}
	for _, bad := range []string{"ABC123", "abc12", "abc1234", "../../x"} {
		if _, err := c.WakePreview(ctx, "ok", bad); !errors.Is(err, ErrRefused) {
			t.Errorf("preview id %q: %v, want ErrRefused", bad, err)
		}
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	want := []string{"wake ok preview abc123", "wake ok preview gone00"}
	if !slices.Equal(rt.asked, want) {
		t.Fatalf("the runtime was asked %q, want %q", rt.asked, want)
	}
}
