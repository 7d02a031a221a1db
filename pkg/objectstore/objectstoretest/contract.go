// Package objectstoretest is the object-store contract: what every adapter of the store must
// do, run against a real server (pkg/testinfra.StartObjectStore). No fake store passes it.
package objectstoretest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"tori.dev/pkg/objectstore"
)

// Store is what the contract exercises: *objectstore.Store, or any adapter kept beside it.
type Store interface {
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) (objectstore.Info, error)
	Get(ctx context.Context, key string, rng *objectstore.Range) (io.ReadCloser, objectstore.Info, error)
	Head(ctx context.Context, key string) (objectstore.Info, error)
	Delete(ctx context.Context, key string) error
	List(ctx context.Context, prefix string, fn func(objectstore.Info) bool) error
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
	PresignPut(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// Run checks s against the contract. s must name an empty bucket its credentials own.
func Run(t *testing.T, s Store) {
	t.Run("PutGetHead", func(t *testing.T) { putGetHead(t, s) })
	t.Run("StreamingMultipart", func(t *testing.T) { streamingMultipart(t, s) })
	t.Run("FailedUploadLeavesNothing", func(t *testing.T) { failedUpload(t, s) })
	t.Run("Ranges", func(t *testing.T) { ranges(t, s) })
	t.Run("Missing", func(t *testing.T) { missing(t, s) })
	t.Run("Delete", func(t *testing.T) { deleteTwice(t, s) })
	t.Run("ListByPrefix", func(t *testing.T) { listByPrefix(t, s) })
	t.Run("PresignedGet", func(t *testing.T) { presignedGet(t, s) })
	t.Run("PresignedPut", func(t *testing.T) { presignedPut(t, s) })
	t.Run("PresignLifetimeBounded", func(t *testing.T) { presignBounds(t, s) })
	t.Run("InvalidKeys", func(t *testing.T) { invalidKeys(t, s) })
}

func putGetHead(t *testing.T, s Store) {
	ctx := context.Background()
	body := []byte("hello, object store")
	info, err := s.Put(ctx, "pgh/greeting.txt", bytes.NewReader(body), int64(len(body)), "text/plain")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if info.Size != int64(len(body)) || info.ETag == "" {
		t.Fatalf("put info = %+v, want size %d and an ETag", info, len(body))
	}
	head, err := s.Head(ctx, "pgh/greeting.txt")
	if err != nil {
		t.Fatalf("head: %v", err)
	}
	if head.Size != int64(len(body)) || head.ContentType != "text/plain" || head.ETag != info.ETag {
		t.Fatalf("head = %+v, want size %d, text/plain, ETag %s", head, len(body), info.ETag)
	}
	if got := readAll(t, s, "pgh/greeting.txt", nil); !bytes.Equal(got, body) {
		t.Fatalf("get = %q, want %q", got, body)
	}
	// Overwriting replaces: the store keeps one version.
	if _, err := s.Put(ctx, "pgh/greeting.txt", strings.NewReader("v2"), -1, ""); err != nil {
		t.Fatalf("overwrite: %v", err)
	}
	if got := readAll(t, s, "pgh/greeting.txt", nil); string(got) != "v2" {
		t.Fatalf("after overwrite get = %q, want v2", got)
	}
}

// streamingMultipart uploads more than two parts of unknown length, as an upload arrives.
func streamingMultipart(t *testing.T, s Store) {
	ctx := context.Background()
	const size = 2*objectstore.PartSize + 12345
	src := &patternReader{left: size}
	info, err := s.Put(ctx, "multi/blob.bin", src, -1, "")
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if info.Size != size {
		t.Fatalf("put size = %d, want %d", info.Size, size)
	}
	head, err := s.Head(ctx, "multi/blob.bin")
	if err != nil || head.Size != size {
		t.Fatalf("head = %+v, %v; want size %d", head, err, size)
	}
	rc, _, err := s.Get(ctx, "multi/blob.bin", nil)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	defer rc.Close()
	got, want := sha256.New(), sha256.New()
	if _, err := io.Copy(got, rc); err != nil {
		t.Fatalf("read: %v", err)
	}
	_, _ = io.Copy(want, &patternReader{left: size})
	if !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatal("the object read back differs from what was uploaded")
	}
}

func failedUpload(t *testing.T, s Store) {
	ctx := context.Background()
	broken := io.MultiReader(&patternReader{left: objectstore.PartSize + 10}, errReader{})
	if _, err := s.Put(ctx, "broken/half.bin", broken, -1, ""); err == nil {
		t.Fatal("put of a reader that fails succeeded")
	}
	if _, err := s.Head(ctx, "broken/half.bin"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("after a failed upload head = %v, want ErrNotFound (nothing half-written)", err)
	}
}

func ranges(t *testing.T, s Store) {
	ctx := context.Background()
	body := []byte("0123456789abcdefghij")
	if _, err := s.Put(ctx, "range/r.txt", bytes.NewReader(body), int64(len(body)), ""); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rng  objectstore.Range
		want string
	}{
		{objectstore.Range{Start: 0, End: 0}, "0"},
		{objectstore.Range{Start: 5, End: 9}, "56789"},
		{objectstore.Range{Start: 15, End: -1}, "fghij"},
		{objectstore.Range{Start: 0, End: -1}, string(body)},
		{objectstore.Range{Start: 18, End: 100}, "ij"},
	} {
		rng := tc.rng
		if got := readAll(t, s, "range/r.txt", &rng); string(got) != tc.want {
			t.Errorf("range %+v = %q, want %q", tc.rng, got, tc.want)
		}
	}
	if _, _, err := s.Get(ctx, "range/r.txt", &objectstore.Range{Start: 50, End: 60}); !errors.Is(err, objectstore.ErrInvalidRange) {
		t.Errorf("range past the end: %v, want ErrInvalidRange", err)
	}
	if _, _, err := s.Get(ctx, "range/r.txt", &objectstore.Range{Start: 9, End: 5}); !errors.Is(err, objectstore.ErrInvalidRange) {
		t.Errorf("range with end before start: %v, want ErrInvalidRange", err)
	}
}

func missing(t *testing.T, s Store) {
	ctx := context.Background()
	if _, err := s.Head(ctx, "nothing/here"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("head of a missing key: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Get(ctx, "nothing/here", nil); !errors.Is(err, objectstore.ErrNotFound) {
		t.Errorf("get of a missing key: %v, want ErrNotFound", err)
	}
}

func deleteTwice(t *testing.T, s Store) {
	ctx := context.Background()
	if _, err := s.Put(ctx, "del/x", strings.NewReader("x"), 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "del/x"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.Head(ctx, "del/x"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("head after delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "del/x"); err != nil {
		t.Fatalf("a second delete: %v, want none (reclaiming may run twice)", err)
	}
}

func listByPrefix(t *testing.T, s Store) {
	ctx := context.Background()
	for _, k := range []string{"ls/a/2", "ls/a/1", "ls/a/sub/3", "ls/b/1", "ls/ab"} {
		if _, err := s.Put(ctx, k, strings.NewReader(k), int64(len(k)), ""); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	if err := s.List(ctx, "ls/a/", func(i objectstore.Info) bool {
		if i.Size != int64(len(i.Key)) {
			t.Errorf("listed %s with size %d, want %d", i.Key, i.Size, len(i.Key))
		}
		keys = append(keys, i.Key)
		return true
	}); err != nil {
		t.Fatalf("list: %v", err)
	}
	if got, want := strings.Join(keys, ","), "ls/a/1,ls/a/2,ls/a/sub/3"; got != want {
		t.Fatalf("list ls/a/ = %s, want %s", got, want)
	}
	n := 0
	if err := s.List(ctx, "ls/", func(objectstore.Info) bool { n++; return n < 2 }); err != nil {
		t.Fatalf("list stopped early: %v", err)
	}
	if n != 2 {
		t.Fatalf("list went on after fn returned false: %d calls", n)
	}
	n = 0
	if err := s.List(ctx, "ls/none/", func(objectstore.Info) bool { n++; return true }); err != nil || n != 0 {
		t.Fatalf("list of an empty prefix: %d objects, %v", n, err)
	}
}

func presignedGet(t *testing.T, s Store) {
	ctx := context.Background()
	if _, err := s.Put(ctx, "ps/get.txt", strings.NewReader("presigned"), 9, "text/plain"); err != nil {
		t.Fatal(err)
	}
	u, err := s.PresignGet(ctx, "ps/get.txt", time.Minute)
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	status, body := httpDo(t, http.MethodGet, u, nil)
	if status != http.StatusOK || body != "presigned" {
		t.Fatalf("GET presigned = %d %q, want 200 presigned", status, body)
	}
	// The signature covers the key: the same URL bent to another key is refused.
	other := strings.Replace(u, "ps/get.txt", "ps/other.txt", 1)
	if status, _ := httpDo(t, http.MethodGet, other, nil); status != http.StatusForbidden {
		t.Fatalf("GET with the key changed = %d, want 403", status)
	}
	// And it dies: a URL of one second is refused once the second is over.
	short, err := s.PresignGet(ctx, "ps/get.txt", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if status, _ := httpDo(t, http.MethodGet, short, nil); status != http.StatusForbidden {
		t.Fatalf("GET with an expired URL = %d, want 403", status)
	}
}

func presignedPut(t *testing.T, s Store) {
	ctx := context.Background()
	u, err := s.PresignPut(ctx, "ps/put.bin", time.Minute)
	if err != nil {
		t.Fatalf("presign: %v", err)
	}
	if status, body := httpDo(t, http.MethodPut, u, []byte("uploaded by URL")); status != http.StatusOK {
		t.Fatalf("PUT presigned = %d %s", status, body)
	}
	if got := readAll(t, s, "ps/put.bin", nil); string(got) != "uploaded by URL" {
		t.Fatalf("after presigned PUT get = %q", got)
	}
	// A PUT URL does not read.
	if status, _ := httpDo(t, http.MethodGet, u, nil); status != http.StatusForbidden {
		t.Fatalf("GET with a PUT URL = %d, want 403", status)
	}
}

func presignBounds(t *testing.T, s Store) {
	ctx := context.Background()
	for _, ttl := range []time.Duration{0, -time.Second, objectstore.MaxPresignLifetime + time.Second} {
		if _, err := s.PresignGet(ctx, "ps/x", ttl); err == nil {
			t.Errorf("PresignGet with ttl %s succeeded", ttl)
		}
		if _, err := s.PresignPut(ctx, "ps/x", ttl); err == nil {
			t.Errorf("PresignPut with ttl %s succeeded", ttl)
		}
	}
}

func invalidKeys(t *testing.T, s Store) {
	ctx := context.Background()
	for _, k := range []string{"", "/abs", "a/../b", "./a", strings.Repeat("k", 1025)} {
		if _, err := s.Put(ctx, k, strings.NewReader("x"), 1, ""); err == nil {
			t.Errorf("put with key %q succeeded", k)
		}
	}
}

func readAll(t *testing.T, s Store, key string, rng *objectstore.Range) []byte {
	t.Helper()
	rc, _, err := s.Get(context.Background(), key, rng)
	if err != nil {
		t.Fatalf("get %s %+v: %v", key, rng, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}

func httpDo(t *testing.T, method, url string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// patternReader yields left bytes of a fixed, position-dependent pattern without holding
// them: a large upload that costs the test no memory.
type patternReader struct{ left, off int64 }

func (p *patternReader) Read(b []byte) (int, error) {
	if p.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(b)) > p.left {
		b = b[:p.left]
	}
	for i := range b {
		b[i] = byte((p.off + int64(i)) * 31 % 251)
	}
	p.off += int64(len(b))
	p.left -= int64(len(b))
	return len(b), nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, fmt.Errorf("the client went away") }
