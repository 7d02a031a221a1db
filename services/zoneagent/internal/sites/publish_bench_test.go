package sites

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkPublish publishes a site of 1,000 files of 50 KiB (README's static deploy shape).
//
//	OBJECTSTORE_BIN=$(scripts/objectstore-build.sh) go test -run '^$' -bench Publish -benchtime 3x ./internal/sites/
func BenchmarkPublish(b *testing.B) {
	s := zoneStore(b)
	dir := b.TempDir()
	body := make([]byte, 50<<10)
	for i := range 1000 {
		p := filepath.Join(dir, fmt.Sprintf("d%d", i%10), fmt.Sprintf("f%d.html", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, body, 0o644)
	}
	for i := 0; b.Loop(); i++ {
		if err := s.Publish(context.Background(), "app1", fmt.Sprintf("d%d", i), dir); err != nil {
			b.Fatal(err)
		}
	}
}
