//go:build !linux

package objectstore

// partBuffer is PartSize bytes on the Go heap: only Linux builds map them outside it.
type partBuffer struct{ b []byte }

func newPartBuffer() *partBuffer { return &partBuffer{b: make([]byte, PartSize)} }
func (p *partBuffer) idle()      {}
func (p *partBuffer) free()      { p.b = nil }
