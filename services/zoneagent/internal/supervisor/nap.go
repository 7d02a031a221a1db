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

// napIdle stops the web instances of the minScale-0 apps idle since idleAfter; their other
// types run on. An app whose instances are being changed is looked at next time.
func (l *Local) napIdle(ctx context.Context, now time.Time) int {
	if l.IdleAfter <= 0 {
		return 0
	}
	napped := l.napPreviews(now) // previews.go
	for _, appID := range l.procs.idleApps(now, l.IdleAfter) {
		unlock, ok := l.procs.tryLock(appID)
		if !ok {
			continue
		}
		web, idle := l.procs.takeIdleWeb(appID, now, l.IdleAfter)
		unlock()
		if !idle {
			continue
		}
		for _, p := range web {
			p.stop()
		}
		// A napping app keeps no process: its network namespace's holder and pasta (~20 MB)
		// go too, unless another of its instances still runs in it. The wake makes it anew.
		l.Source.Sandbox.ReleaseIdleNetwork(appID)
		napped++
		l.report(appID)
		if l.Napped != nil {
			l.Napped(ctx, appID, true)
		}
	}
	return napped
}
