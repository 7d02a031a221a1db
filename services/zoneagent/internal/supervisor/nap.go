package supervisor

import (
	"context"
	"time"

	"tori.dev/pkg/lifecycle"
)

// NapJob naps idle minScale-0 services: it looks a few times per ZONE_IDLE_AFTER, at least
// every 30 s.
func (l *Local) NapJob() lifecycle.Job {
	every := l.IdleAfter / 4
	if every <= 0 || every > 30*time.Second {
		every = 30 * time.Second
	}
	return lifecycle.Job{Name: "nap idle services", Every: every, Run: func(ctx context.Context) (int64, error) {
		return int64(l.napIdle(ctx, time.Now())), nil
	}}
}

func (l *Local) napIdle(ctx context.Context, now time.Time) int {
	if l.IdleAfter <= 0 {
		return 0
	}
	nap := l.procs.takeIdle(now, l.IdleAfter)
	for _, p := range nap {
		p.stop()
		if l.Napped != nil {
			l.Napped(ctx, p.appID, true)
		}
	}
	return len(nap)
}
