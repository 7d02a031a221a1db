package objectstore_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

// TestPutRoundTrips: objects of every shape Put handles (one part or several, length known
// or not, a length that is an exact number of parts, empty) read back byte for byte.
func TestPutRoundTrips(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	eachReadAhead(t, func(t *testing.T, ahead bool) {
		testPutRoundTrips(t, holderWith(t, srv, "put", fmt.Sprintf("put-bucket-%v", ahead), ahead))
	})
}

func testPutRoundTrips(t *testing.T, s *objectstore.Store) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		size  int64
		known bool
	}{
		{"empty, length unknown", 0, false},
		{"small, length unknown", 1000, false},
		{"one whole part, length unknown", objectstore.PartSize, false},
		{"one whole part, length known", objectstore.PartSize, true},
		{"12 MiB, length unknown", 12 << 20, false},
		{"12 MiB, length known", 12 << 20, true},
		{"three whole parts, length unknown", 3 * objectstore.PartSize, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "roundtrip/" + strings.ReplaceAll(tc.name, " ", "-")
			size := int64(-1)
			if tc.known {
				size = tc.size
			}
			info, err := s.Put(ctx, key, &pattern{seed: byte(tc.size), left: tc.size}, size, "")
			if err != nil {
				t.Fatalf("put: %v", err)
			}
			if info.Size != tc.size || info.ETag == "" {
				t.Fatalf("put info = %+v, want size %d and an ETag", info, tc.size)
			}
			if got, want := storedSum(t, s, key), sumOf(&pattern{seed: byte(tc.size), left: tc.size}); got != want {
				t.Fatalf("read back %x, want %x", got, want)
			}
		})
	}
}

// TestPutOfKnownLengthChecksTheStream: a reader shorter than the length it was given stores
// nothing; one longer stores only that length.
func TestPutOfKnownLengthChecksTheStream(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	s := holder(t, srv, "known", "known-bucket")
	ctx := context.Background()
	const size = 2*objectstore.PartSize + 1
	if _, err := s.Put(ctx, "short", &pattern{left: size - 1}, size, ""); err == nil {
		t.Fatal("a stream one byte short of its length was stored")
	}
	if _, err := s.Head(ctx, "short"); !errors.Is(err, objectstore.ErrNotFound) {
		t.Fatalf("after a short stream head = %v, want ErrNotFound", err)
	}
	info, err := s.Put(ctx, "long", &pattern{left: size + 100}, size, "")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != size || storedSum(t, s, "long") != sumOf(&pattern{left: size}) {
		t.Fatalf("stored %d bytes, want the first %d of the stream", info.Size, size)
	}
	noUnfinishedUploads(t, srv, "known", "known-bucket")
}

// TestFailedPutLeavesNoUpload: a stream that fails after two parts were sent, or whose ctx is
// cancelled between parts, leaves neither an object nor an unfinished multipart upload (whose
// parts the server would otherwise keep).
func TestFailedPutLeavesNoUpload(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	eachReadAhead(t, func(t *testing.T, ahead bool) {
		bucket := fmt.Sprintf("abort-bucket-%v", ahead)
		testFailedPutLeavesNoUpload(t, holderWith(t, srv, "abort", bucket, ahead), coreOf(t, srv, "abort"), bucket)
	})
}

func testFailedPutLeavesNoUpload(t *testing.T, s *objectstore.Store, core minio.Core, bucket string) {
	ctx := context.Background()

	// The listing the assertion relies on does see an unfinished upload.
	id, err := core.NewMultipartUpload(ctx, bucket, "probe", minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := unfinishedUploads(t, core, bucket); n != 1 {
		t.Fatalf("an upload started and left: listed %d unfinished, want 1", n)
	}
	if err := core.AbortMultipartUpload(ctx, bucket, "probe", id); err != nil {
		t.Fatal(err)
	}

	broken := io.MultiReader(&pattern{left: 2*objectstore.PartSize + 10}, failing{})
	if _, err := s.Put(ctx, "broken", broken, -1, ""); !errors.Is(err, errBroken) {
		t.Fatalf("put of a failing stream: %v, want its read error", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancelled := io.MultiReader(&pattern{left: objectstore.PartSize + 10}, cancelOnRead{cancel}, &pattern{left: objectstore.PartSize})
	if _, err := s.Put(cctx, "cancelled", cancelled, -1, ""); err == nil {
		t.Fatal("put whose ctx was cancelled mid-stream succeeded")
	}
	for _, key := range []string{"broken", "cancelled"} {
		if _, err := s.Head(ctx, key); !errors.Is(err, objectstore.ErrNotFound) {
			t.Errorf("after a failed upload head %s = %v, want ErrNotFound", key, err)
		}
	}
	if n := unfinishedUploads(t, core, bucket); n != 0 {
		t.Fatalf("%d unfinished multipart uploads left behind, want none", n)
	}
}

// TestConcurrentPutsKeepTheirOwnBytes: uploads running at once each store their own stream
// (each holds a part buffer of its own; run with -race).
func TestConcurrentPutsKeepTheirOwnBytes(t *testing.T) {
	srv := testinfra.StartObjectStore(t)
	eachReadAhead(t, func(t *testing.T, ahead bool) {
		testConcurrentPutsKeepTheirOwnBytes(t, holderWith(t, srv, "many", fmt.Sprintf("many-bucket-%v", ahead), ahead))
	})
}

func testConcurrentPutsKeepTheirOwnBytes(t *testing.T, s *objectstore.Store) {
	ctx := context.Background()
	const uploads = 4
	size := func(i int) int64 { return int64(i+1)*objectstore.PartSize + int64(i)*777 }
	var wg sync.WaitGroup
	errs := make([]error, uploads)
	for i := range uploads {
		wg.Go(func() {
			_, errs[i] = s.Put(ctx, fmt.Sprintf("many/%d", i), &pattern{seed: byte(i * 31), left: size(i)}, -1, "")
		})
	}
	wg.Wait()
	for i := range uploads {
		if errs[i] != nil {
			t.Fatalf("upload %d: %v", i, errs[i])
		}
		if storedSum(t, s, fmt.Sprintf("many/%d", i)) != sumOf(&pattern{seed: byte(i * 31), left: size(i)}) {
			t.Errorf("upload %d read back differs from its stream", i)
		}
	}
}

// eachReadAhead runs test for a store that reads one part at a time and for one that reads
// the next part while it sends the one before (Config.ReadAhead).
func eachReadAhead(t *testing.T, test func(t *testing.T, ahead bool)) {
	for _, ahead := range []bool{false, true} {
		t.Run(fmt.Sprintf("read-ahead=%v", ahead), func(t *testing.T) { test(t, ahead) })
	}
}

// pattern yields left bytes of a sequence that differs at every offset and with seed, so a
// part sent twice, dropped or taken from another upload shows in the sum.
type pattern struct {
	seed byte
	off  int64
	left int64
}

func (p *pattern) Read(b []byte) (int, error) {
	if p.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), p.left))
	for i := range n {
		o := p.off + int64(i)
		b[i] = byte(o) ^ byte(o>>13) ^ p.seed
	}
	p.off += int64(n)
	p.left -= int64(n)
	return n, nil
}

var errBroken = errors.New("the client went away")

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errBroken }

// cancelOnRead cancels the upload's ctx when the stream reaches it, then reads on.
type cancelOnRead struct{ cancel context.CancelFunc }

func (c cancelOnRead) Read([]byte) (int, error) { c.cancel(); return 0, io.EOF }

func sumOf(r io.Reader) [32]byte {
	h := sha256.New()
	_, _ = io.Copy(h, r)
	return [32]byte(h.Sum(nil))
}

func storedSum(t *testing.T, s *objectstore.Store, key string) [32]byte {
	t.Helper()
	rc, _, err := s.Get(context.Background(), key, nil)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := io.Copy(h, rc); err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return [32]byte(h.Sum(nil))
}

// coreOf is minio-go's lower-level client with a holder's credentials (holder's secret rule).
func coreOf(t *testing.T, srv testinfra.ObjectStore, access string) minio.Core {
	t.Helper()
	c, err := minio.New(strings.TrimPrefix(srv.URL, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(access, "secret-of-"+access+"-0123456789", ""), Region: "us-east-1", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return minio.Core{Client: c}
}

func unfinishedUploads(t *testing.T, core minio.Core, bucket string) int {
	t.Helper()
	res, err := core.ListMultipartUploads(context.Background(), bucket, "", "", "", "", 1000)
	if err != nil {
		t.Fatalf("list multipart uploads: %v", err)
	}
	return len(res.Uploads)
}

func noUnfinishedUploads(t *testing.T, srv testinfra.ObjectStore, access, bucket string) {
	t.Helper()
	if n := unfinishedUploads(t, coreOf(t, srv, access), bucket); n != 0 {
		t.Fatalf("%d unfinished multipart uploads left behind, want none", n)
	}
}
