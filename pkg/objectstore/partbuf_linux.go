package objectstore

import "syscall"

// partBuffer is PartSize bytes of anonymous memory mapped outside the Go heap (partbuf.go
// says why), or on the heap if the mapping fails.
type partBuffer struct {
	b      []byte
	mapped bool
}

func newPartBuffer() *partBuffer {
	b, err := syscall.Mmap(-1, 0, PartSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return &partBuffer{b: make([]byte, PartSize)}
	}
	return &partBuffer{b: b, mapped: true}
}

// idle gives a kept buffer's pages back to the system: an idle service holds no part in
// memory. The next upload touches them afresh (zeroed), at a page fault each.
func (p *partBuffer) idle() {
	if p.mapped {
		_ = syscall.Madvise(p.b, syscall.MADV_DONTNEED)
	}
}

// free unmaps a buffer the pool does not keep.
func (p *partBuffer) free() {
	if p.mapped {
		_ = syscall.Munmap(p.b)
	}
	p.b = nil
}
