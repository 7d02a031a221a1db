package upload

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"testing"
)

// Spools are kept between files: every file of a static upload still reaches the tar with
// exactly its own bytes, whether it stayed in memory or went to disk, and whatever size the
// file before it had.
func TestStaticFilesKeepTheirOwnBytesAcrossSpools(t *testing.T) {
	fill := func(seed byte, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = seed + byte(i%251)
		}
		return b
	}
	files := []struct {
		name string
		data []byte
	}{
		{"a.txt", fill(1, 70_000)},
		{"big.bin", fill(2, spoolMemory+12_345)}, // to disk
		{"b.txt", fill(3, 10)},                   // shorter than what its spool held before
		{"c.bin", fill(4, spoolMemory-1)},
		{"d.txt", nil},
	}
	var body bytes.Buffer
	for _, f := range files {
		fmt.Fprintf(&body, "--%s\r\nContent-Disposition: form-data; name=\"files\"; filename=%q\r\n\r\n", boundary, f.name)
		body.Write(f.data)
		body.WriteString("\r\n")
	}
	fmt.Fprintf(&body, "--%s--\r\n", boundary)

	var out bytes.Buffer
	n, _, err := Static(&body, boundary, &out)
	if err != nil || n != len(files) {
		t.Fatalf("Static = %d files, %v; want %d", n, err, len(files))
	}
	tr := tar.NewReader(&out)
	for _, f := range files {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("tar entry for %s: %v", f.name, err)
		}
		got, _ := io.ReadAll(tr)
		if h.Name != f.name || h.Size != int64(len(f.data)) || !bytes.Equal(got, f.data) {
			t.Errorf("entry %s (%d bytes) differs from file %s (%d bytes)", h.Name, len(got), f.name, len(f.data))
		}
	}
}
