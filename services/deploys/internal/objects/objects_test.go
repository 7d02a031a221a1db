package objects

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	l, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	up, _ := l.Create(ctx, "artifacts/a/1.tar")
	io.WriteString(up, "hello")
	if _, err := l.Open(ctx, "artifacts/a/1.tar"); !errors.Is(err, ErrNotFound) {
		t.Fatal("an uncommitted object is visible")
	}
	if err := up.Commit(); err != nil {
		t.Fatal(err)
	}
	r, err := l.Open(ctx, "artifacts/a/1.tar")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	r.Close()
	if string(b) != "hello" {
		t.Fatal(string(b))
	}
	up, _ = l.Create(ctx, "artifacts/a/2.tar")
	io.WriteString(up, "partial")
	up.Abort()
	if tmp, _ := os.ReadDir(filepath.Join(dir, ".tmp")); len(tmp) != 0 {
		t.Fatalf("abort left %v", tmp)
	}
	var keys []string
	l.Walk(ctx, "artifacts", func(k string, _ time.Time) error { keys = append(keys, k); return nil })
	if len(keys) != 1 || keys[0] != "artifacts/a/1.tar" {
		t.Fatalf("walk: %v", keys)
	}
	if err := l.Delete(ctx, "artifacts/a/1.tar"); err != nil || l.Delete(ctx, "artifacts/a/1.tar") != nil {
		t.Fatal("delete must be idempotent")
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a/../../b", ".tmp/x", "a//b", ""} {
		if _, err := l.Create(ctx, bad); err == nil {
			t.Errorf("key %q accepted", bad)
		}
	}
}

func TestLimitedReaderStopsJustPastTheLimit(t *testing.T) {
	for _, tc := range []struct {
		size int
		ok   bool
	}{{99, true}, {100, true}, {101, false}, {10000, false}} {
		r := &LimitedReader{R: strings.NewReader(strings.Repeat("x", tc.size)), Limit: 100}
		n, err := io.Copy(io.Discard, r)
		if tc.ok != (err == nil) {
			t.Errorf("size %d: %v", tc.size, err)
		}
		if !tc.ok && (!errors.Is(err, ErrTooLarge) || n > 101) {
			t.Errorf("size %d: read %d, err %v", tc.size, n, err)
		}
	}
}
