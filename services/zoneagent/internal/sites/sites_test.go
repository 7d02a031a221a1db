package sites

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
)

// zoneStore is a zone's site store: its own bucket on a real S3 server, reached with the
// zone's own credentials (as bin/bootstrap makes them), reading ahead as the zone does.
func zoneStore(t testing.TB) Store {
	t.Helper()
	env := testinfra.StartObjectStore(t).ZoneObjectStoreEnv(t, "sites-test")
	bucket, err := objectstore.New(objectstore.Config{URL: env["OBJECT_STORE_URL"], AccessKey: env["ZONEAGENT_OBJECT_STORE_ACCESS_KEY"], SecretKey: env["ZONEAGENT_OBJECT_STORE_SECRET_KEY"], Bucket: env["ZONEAGENT_OBJECT_STORE_BUCKET"], ReadAhead: true})
	if err != nil {
		t.Fatal(err)
	}
	return Store{Bucket: bucket}
}

func publish(t testing.TB, s Store, appID, deployID string, files map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Publish(context.Background(), appID, deployID, dir); err != nil {
		t.Fatal(err)
	}
}

func keys(t testing.TB, s Store, prefix string) []string {
	t.Helper()
	var out []string
	if err := s.Bucket.List(context.Background(), prefix, func(o objectstore.Info) bool { out = append(out, o.Key); return true }); err != nil {
		t.Fatal(err)
	}
	return out
}

// manifestSize is the size of a revision's manifest in the store (the cache keeps a copy).
func manifestSize(t testing.TB, s Store, appID, deployID string) int64 {
	t.Helper()
	body, info, err := s.Bucket.Get(context.Background(), manifestKey(appID, deployID), nil)
	if err != nil {
		t.Fatal(err)
	}
	body.Close()
	return info.Size
}

func read(t testing.TB, c *Cache, appID, deployID, name string) string {
	t.Helper()
	o, err := c.Open(context.Background(), appID, deployID, name)
	if err != nil {
		t.Fatalf("open %s/%s/%q: %v", appID, deployID, name, err)
	}
	defer o.Close()
	b, err := io.ReadAll(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A publication writes the revision's bundle and then its manifest, which places every file
// in the bundle with the content type the edge serves it with and its ETag (half its SHA-256).
func TestPublishLayout(t *testing.T) {
	s := zoneStore(t)
	files := map[string][]byte{
		"index.html":        []byte("<p>home</p>"),
		"assets/site.css":   []byte("body{}"),
		"data":              []byte("\x89PNG\r\n\x1a\n0000"), // no extension: sniffed
		".well-known/empty": {},
		"a b/ünïcode ?.txt": []byte("odd name"),
	}
	publish(t, s, "app1", "d1", files)
	got := keys(t, s, "sites/app1/d1/")
	want := []string{"sites/app1/d1/bundle", "sites/app1/d1/manifest.json"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("keys:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	m, err := newManifestCache(s, nil).load(context.Background(), manifestKey("app1", "d1"))
	if err != nil {
		t.Fatal(err)
	}
	bundle, info, err := s.Bucket.Get(context.Background(), bundleKey("app1", "d1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := io.ReadAll(bundle)
	bundle.Close()
	if info.Size != int64(len(whole)) || len(m.Files) != len(files) {
		t.Fatalf("bundle of %d bytes, manifest of %d files", info.Size, len(m.Files))
	}
	for name, ctype := range map[string]string{"index.html": "text/html; charset=utf-8", "assets/site.css": "text/css; charset=utf-8", "data": "image/png", ".well-known/empty": "text/plain; charset=utf-8"} {
		f := m.Files[name]
		sum := sha256.Sum256(files[name])
		if f.ContentType != ctype || f.ETag != `"`+hex.EncodeToString(sum[:16])+`"` || f.Size != int64(len(files[name])) ||
			!bytes.Equal(whole[f.Offset:f.Offset+f.Size], files[name]) {
			t.Errorf("%s: manifest %+v, want type %s", name, f, ctype)
		}
	}
	c, err := NewCache(s, t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, c, "app1", "d1", "a b/ünïcode ?.txt"); got != "odd name" {
		t.Fatalf("odd name: %q", got)
	}
	if got := read(t, c, "app1", "d1", ".well-known/empty"); got != "" {
		t.Fatalf("empty file: %q", got)
	}
}

// The cache resolves folders to their index.html, answers what the revision does not hold
// as not found, and fetches again a copy wiped from under it.
func TestCacheServesAndRefills(t *testing.T) {
	s := zoneStore(t)
	publish(t, s, "app1", "d1", map[string][]byte{"index.html": []byte("home"), "a/index.html": []byte("a home"), "a/x.txt": []byte("x")})
	dir := t.TempDir()
	c, err := NewCache(s, dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"": "home", "index.html": "home", "a": "a home", "a/index.html": "a home", "a/x.txt": "x"} {
		if got := read(t, c, "app1", "d1", name); got != want {
			t.Errorf("%q: %q, want %q", name, got, want)
		}
	}
	for _, tc := range []struct{ app, deploy, name string }{{"app1", "d1", "missing"}, {"app1", "d1", "a/x.txt/"}, {"app1", "d2", ""}, {"app2", "d1", ""}, {"..", "d1", ""}, {"app1", "a/b", ""}} {
		if _, err := c.Open(context.Background(), tc.app, tc.deploy, tc.name); !errors.Is(err, ErrNotFound) {
			t.Errorf("%+v: %v, want ErrNotFound", tc, err)
		}
	}
	if used := c.Used(); used != int64(len("home")+len("a home")+len("x"))+manifestSize(t, s, "app1", "d1") {
		t.Fatalf("used %d", used)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if got := read(t, c, "app1", "d1", "a/x.txt"); got != "x" {
		t.Fatalf("after the wipe: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, localName(fileKey("app1", "d1", "a/x.txt")))); err != nil {
		t.Fatalf("not cached again: %v", err)
	}
}

// A restarted edge keeps the copies the last run cached: it serves them (manifests too)
// without asking the store, checks each against its manifest first (a copy whose bytes
// differ is fetched again), removes unfinished downloads and trims what it keeps to its cap.
func TestCacheKeepsItsCopiesAcrossRestarts(t *testing.T) {
	s := zoneStore(t)
	publish(t, s, "app1", "d1", map[string][]byte{"index.html": []byte("home"), "a.txt": []byte("aaaa")})
	dir := t.TempDir()
	c, err := NewCache(s, dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"index.html": "home", "a.txt": "aaaa"} {
		if got := read(t, c, "app1", "d1", name); got != want {
			t.Fatalf("%s: %q", name, got)
		}
	}
	used := c.Used()
	if used <= int64(len("home")+len("aaaa")) { // the manifest's copy counts too
		t.Fatalf("used %d: the manifest was not kept on disk", used)
	}
	// The copy of a.txt now holds other bytes of the same size (a write cut short by a crash).
	os.WriteFile(filepath.Join(dir, localName(fileKey("app1", "d1", "a.txt"))), []byte("bbbb"), 0o600)
	unfinished := filepath.Join(dir, ".fill-"+localName(fileKey("app1", "d1", "x"))+".123")
	os.WriteFile(unfinished, []byte("part"), 0o600)
	os.WriteFile(filepath.Join(dir, "not-ours"), []byte("kept"), 0o600)

	restarted, err := NewCache(s, dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if restarted.Used() != used {
		t.Fatalf("after a restart used %d, want %d", restarted.Used(), used)
	}
	if _, err := os.Stat(unfinished); !os.IsNotExist(err) {
		t.Fatalf("an unfinished download was left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "not-ours")); err != nil {
		t.Fatalf("a file the cache did not make was removed: %v", err)
	}
	if got := read(t, restarted, "app1", "d1", "a.txt"); got != "aaaa" {
		t.Fatalf("a kept copy that does not match its manifest was served: %q", got)
	}
	if restarted.Used() != used {
		t.Fatalf("after replacing a copy used %d, want %d", restarted.Used(), used)
	}
	// With the revision gone from the store, only the kept copies can serve it.
	if _, err := s.RemoveRevision(context.Background(), "app1", "d1"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, restarted, "app1", "d1", "index.html"); got != "home" {
		t.Fatalf("kept copy: %q", got)
	}
	again, err := NewCache(s, dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"": "home", "a.txt": "aaaa"} {
		if got := read(t, again, "app1", "d1", name); got != want {
			t.Fatalf("second restart, %q: %q", name, got)
		}
	}

	small, err := NewCache(s, dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	onDisk := int64(0)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "not-ours" {
			info, _ := e.Info()
			onDisk += info.Size()
		}
	}
	if small.Used() > 4 || onDisk != small.Used() {
		t.Fatalf("a smaller cap kept %d bytes (%d on disk)", small.Used(), onDisk)
	}
}

// The copies never pass the cap: the least recently used go first, and a file larger than an
// eighth of the cap is never cached but read from the store by ranges (Range requests kept).
func TestCacheStaysWithinItsCap(t *testing.T) {
	s := zoneStore(t)
	files := map[string][]byte{}
	for i := range 20 {
		files[string(rune('a'+i))+".bin"] = bytes.Repeat([]byte{byte('a' + i)}, 6<<10)
	}
	big := make([]byte, 100<<10)
	for i := range big {
		big[i] = byte(i % 251)
	}
	files["big.bin"] = big
	publish(t, s, "app1", "d1", files)
	dir := t.TempDir()
	const capBytes = 64 << 10
	c, err := NewCache(s, dir, capBytes)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 { // concurrent readers of the same cold files share each fetch
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name, body := range files {
				if name == "big.bin" {
					continue
				}
				if got := read(t, c, "app1", "d1", name); got != string(body) {
					t.Errorf("%s: %d bytes", name, len(got))
				}
			}
		}()
	}
	wg.Wait()
	onDisk := int64(0)
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, _ := e.Info()
		onDisk += info.Size()
	}
	if c.Used() > capBytes || onDisk > capBytes || c.Used() != onDisk {
		t.Fatalf("used %d, on disk %d, cap %d", c.Used(), onDisk, capBytes)
	}
	if got := read(t, c, "app1", "d1", "a.bin"); got != string(files["a.bin"]) {
		t.Fatal("an evicted file is not fetched again")
	}

	used := c.Used()
	o, err := c.Open(context.Background(), "app1", "d1", "big.bin")
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("GET", "/big.bin", nil)
	req.Header.Set("Range", "bytes=70000-70099")
	w := httptest.NewRecorder()
	http.ServeContent(w, req, o.Name, time.Time{}, o)
	o.Close()
	if w.Code != http.StatusPartialContent || !bytes.Equal(w.Body.Bytes(), big[70000:70100]) || w.Header().Get("Content-Range") != "bytes 70000-70099/102400" {
		t.Fatalf("range of a large file: %d %q %d bytes", w.Code, w.Header().Get("Content-Range"), w.Body.Len())
	}
	if c.Used() != used {
		t.Fatal("a file larger than an eighth of the cap was cached")
	}
	if got := read(t, c, "app1", "d1", "big.bin"); got != string(big) {
		t.Fatal("the large file read whole differs")
	}
}

// Removing a revision deletes its objects (the manifest first: a cache that never saw it
// answers not found) and leaves the app's others; removing the app deletes them all.
func TestRemoveReclaimsObjects(t *testing.T) {
	s := zoneStore(t)
	publish(t, s, "app1", "d1", map[string][]byte{"index.html": []byte("one"), "a/b.txt": []byte("b")})
	publish(t, s, "app1", "d2", map[string][]byte{"index.html": []byte("two")})
	publish(t, s, "app2", "d9", map[string][]byte{"index.html": []byte("other")})
	n, err := s.RemoveRevision(context.Background(), "app1", "d1")
	if err != nil || n != 1 { // its bundle (the manifest went first)
		t.Fatalf("removed %d: %v", n, err)
	}
	if k := keys(t, s, "sites/app1/d1/"); len(k) != 0 {
		t.Fatalf("left %v", k)
	}
	c, err := NewCache(s, t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(context.Background(), "app1", "d1", ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a removed revision: %v", err)
	}
	if got := read(t, c, "app1", "d2", ""); got != "two" {
		t.Fatalf("the other revision: %q", got)
	}
	if _, err := s.RemoveRevision(context.Background(), "app1", "d1"); err != nil {
		t.Fatalf("removing again: %v", err)
	}
	if _, err := s.RemoveApp(context.Background(), "app1"); err != nil {
		t.Fatal(err)
	}
	if k := keys(t, s, "sites/app1/"); len(k) != 0 {
		t.Fatalf("left %v", k)
	}
	if k := keys(t, s, "sites/app2/"); len(k) != 2 {
		t.Fatalf("another app's objects: %v", k)
	}
}
