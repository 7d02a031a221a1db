package supervisor

import (
	"context"
	"fmt"
	"sync"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// Restarts of an instance other than web that exits: at once, then after backoffFirst,
// doubling up to backoffMax; an instance that stayed up backoffReset starts over.
const (
	backoffFirst = time.Second
	backoffMax   = 5 * time.Minute
	backoffReset = 10 * time.Minute
)

// backoff counts an instance's exits in a row.
type backoff struct{ exits int }

// next is the delay before restarting an instance that just exited after running for up.
func (b *backoff) next(up time.Duration) time.Duration {
	if up >= backoffReset {
		b.exits = 0
	}
	b.exits++
	if b.exits == 1 {
		return 0
	}
	return min(backoffFirst<<min(b.exits-2, 20), backoffMax)
}

// worker is one instance of a process type other than web: its process, restarted with
// backoff whenever it exits, until stop.
type worker struct {
	ptype string
	n     int
	quit  chan struct{}
	done  chan struct{}
	first chan struct{} // closed once the first start returned
	once  sync.Once
	// graceful: the process gets SIGTERM and stopGrace when quit closes (a deploy, a
	// scale-down); otherwise it is killed (the app deleted, the agent stopping).
	graceful bool

	mu  sync.Mutex
	cur *proc
}

func (w *worker) name() string { return revision.InstanceName(w.ptype, w.n) }

// up reports whether the instance's process runs now.
func (w *worker) up() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cur != nil && w.cur.alive()
}

func (w *worker) set(p *proc) {
	w.mu.Lock()
	w.cur = p
	w.mu.Unlock()
}

// stop kills the instance and ends its restarts, and waits for them.
func (w *worker) stop() {
	w.once.Do(func() { close(w.quit) })
	<-w.done
}

// stopGracefully ends the instance's restarts and gives its process SIGTERM and stopGrace
// before it is killed, and waits for that.
func (w *worker) stopGracefully() {
	w.once.Do(func() {
		w.graceful = true // read by supervise only after quit closes
		close(w.quit)
	})
	<-w.done
}

// stopWorkersGracefully stops ws together, so their grace periods overlap, and waits.
func stopWorkersGracefully(ws []*worker) {
	var done sync.WaitGroup
	for _, w := range ws {
		done.Add(1)
		go func() {
			defer done.Done()
			w.stopGracefully()
		}()
	}
	done.Wait()
}

// startWorker runs instance n of pt under supervision.
func (l *Local) startWorker(appID, deployID string, ln launcher, pt revision.Process, n int) *worker {
	w := &worker{ptype: pt.Name, n: n, quit: make(chan struct{}), done: make(chan struct{}), first: make(chan struct{})}
	go l.supervise(w, appID, deployID, ln, pt)
	return w
}

// supervise runs w's process and restarts it when it exits, writing a system line to the
// app's log each time, until w stops.
func (l *Local) supervise(w *worker, appID, deployID string, ln launcher, pt revision.Process) {
	defer close(w.done)
	var b backoff
	firstDone := false
	for {
		started := time.Now()
		p, err := ln.start(context.Background(), pt, w.n)
		status := -1
		if err == nil {
			w.set(p)
		}
		if !firstDone {
			firstDone = true
			close(w.first)
		}
		if err == nil {
			l.report(appID)
			select {
			case <-p.exited:
			case <-w.quit:
				if w.graceful {
					p.stopGracefully()
				} else {
					p.stop()
				}
				w.set(nil)
				return
			}
			status = p.status
			w.set(nil)
			l.report(appID)
		}
		delay := b.next(time.Since(started))
		when := "at once"
		if delay > 0 {
			when = "in " + delay.String()
		}
		if err != nil {
			l.systemLine(appID, deployID, w.name(), fmt.Sprintf("%s could not start: %v; retrying %s", w.name(), err, when))
		} else {
			l.systemLine(appID, deployID, w.name(), fmt.Sprintf("%s exited with status %d; restarting %s", w.name(), status, when))
		}
		select {
		case <-time.After(delay):
		case <-w.quit:
			return
		}
	}
}

// systemLine writes a line of the platform's own about an instance to the app's log.
func (l *Local) systemLine(appID, deployID, process, message string) {
	switch {
	case l.Source != nil && l.Source.Output != nil:
		l.Source.Output.instanceSystem(appID, deployID, process, message)
	case l.Image != nil && l.Image.Logs != nil:
		(&Output{Sink: l.Image.Logs}).instanceSystem(appID, deployID, process, message)
	}
}
