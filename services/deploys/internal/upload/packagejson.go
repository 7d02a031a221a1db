package upload

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"

	"tori.dev/services/deploys/internal/deploy"
)

// PackageJSON is what an upload showed of its root package.json, read while the upload
// streamed. The last one wins, as it does when the zone unpacks the artifact.
type PackageJSON struct {
	// Found is whether the upload holds a package.json at its root.
	Found bool
	// Data is its content; nil when it was not read (see Problem).
	Data []byte
	// Problem says why it, or the tarball around it, could not be read; "" when it could.
	Problem string
}

// Limits of the source scan: the zone's own caps on a source tree (entries, unpacked bytes).
// Past them the zone refuses the artifact, so the scan gives up there too, and a tarball
// that inflates without end (a gzip bomb) costs no more than the zone would allow.
const (
	scanMaxEntries = 100_000
	scanMaxBytes   = 4 << 30
)

// errScanDone ends a scan's pipe: the writer then drops what follows.
var errScanDone = errors.New("upload: package.json scan done")

// capture keeps a part's bytes up to deploy.MaxPackageJSONBytes, and notes that there were more.
type capture struct {
	buf  []byte
	over bool
}

func (c *capture) Write(p []byte) (int, error) {
	n := len(p)
	if c.over {
		return n, nil
	}
	if room := deploy.MaxPackageJSONBytes - len(c.buf); len(p) > room {
		c.over, c.buf = true, nil
		return n, nil
	}
	c.buf = append(c.buf, p...)
	return n, nil
}

// result is what a capture holds once its file ended.
func (c *capture) result() PackageJSON {
	if c.over {
		return PackageJSON{Found: true, Problem: fmt.Sprintf("larger than %d bytes", deploy.MaxPackageJSONBytes)}
	}
	return PackageJSON{Found: true, Data: c.buf}
}

// sourceScan reads a gzip-compressed tar as it is written, in a goroutine fed through a
// pipe, and keeps its root package.json. It never fails or slows the upload beyond the
// scan's own pace: once the scan has ended, writes go nowhere.
type sourceScan struct {
	pw     *io.PipeWriter
	ended  bool // the scan stopped reading; only the writer's goroutine touches it
	done   chan struct{}
	result PackageJSON
}

func newSourceScan() *sourceScan {
	pr, pw := io.Pipe()
	s := &sourceScan{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.result = scanSource(pr, scanMaxEntries, scanMaxBytes)
		pr.CloseWithError(errScanDone)
	}()
	return s
}

func (s *sourceScan) Write(p []byte) (int, error) {
	if !s.ended {
		if _, err := s.pw.Write(p); err != nil {
			s.ended = true
		}
	}
	return len(p), nil
}

// Finish ends the input and waits for the scan; it must be called once, whatever happened.
func (s *sourceScan) Finish() PackageJSON {
	s.pw.Close()
	<-s.done
	return s.result
}

// scanSource walks the tarball's entries for a regular file whose cleaned name is
// package.json, as the zone's unpacking names it, within maxEntries entries and maxBytes
// unpacked.
func scanSource(r io.Reader, maxEntries int, maxBytes int64) PackageJSON {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return PackageJSON{Problem: "the source is not a gzip-compressed tarball"}
	}
	defer zr.Close()
	tr := tar.NewReader(io.LimitReader(zr, maxBytes))
	var found PackageJSON
	for entries := 0; ; entries++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return found
		}
		if err != nil || entries >= maxEntries {
			// The zone refuses such a tarball; what was seen before is not trusted either.
			return PackageJSON{Problem: "the source tarball could not be read to its end"}
		}
		if h.Typeflag != tar.TypeReg || path.Clean(h.Name) != deploy.PackageJSONName {
			continue
		}
		c := &capture{}
		if _, err := io.Copy(c, tr); err != nil {
			return PackageJSON{Problem: "the source tarball could not be read to its end"}
		}
		found = c.result()
	}
}
