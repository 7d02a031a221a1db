package objectstore

import "sync"

// maxIdlePartBuffers is how many part buffers stay kept between uploads: enough for the
// uploads a service runs at once in the usual case, so a run of uploads makes none anew.
const maxIdlePartBuffers = 4

// partBuffers hands out the PartSize buffers uploads are read into, one part at a time.
// Every upload holds its own buffer while it runs: concurrent uploads never share one.
//
// A buffer lives outside the Go heap where the platform allows (partbuf_linux.go). On the
// heap, a 5 MiB buffer live during an upload raises the collector's heap goal by its own size
// again (GOGC=100), so it cost deploys about twice its size in peak memory; outside, it costs
// its size while in use, and nothing while kept idle (its pages are given back).
var partBuffers partPool

type partPool struct {
	mu   sync.Mutex
	idle []*partBuffer
}

// get is a kept buffer, or a new one.
func (p *partPool) get() *partBuffer {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		b := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return newPartBuffer()
}

// put takes b back after its upload. Nothing may read b afterwards: the part readers over it
// are detached first (partReader).
func (p *partPool) put(b *partBuffer) {
	b.idle()
	p.mu.Lock()
	if len(p.idle) < maxIdlePartBuffers {
		p.idle = append(p.idle, b)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	b.free()
}
