package sites

import (
	"container/list"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"tori.dev/pkg/objectstore"
)

// maxManifestFiles bounds the cached manifests by the files they list together (about 100
// bytes of memory each), so many large sites cannot grow the edge's memory without bound.
const maxManifestFiles = 1 << 18

// maxManifestBytes refuses a manifest larger than any site the zone publishes could make
// (artifact.DefaultLimits: 100,000 entries).
const maxManifestBytes = 64 << 20

// manifestCache holds recently used revisions' manifests in memory, least recently used out
// first. A manifest never changes once written, so a cached one is never stale; a revision
// not (or no longer) published is not remembered, so a publication is seen at once.
type manifestCache struct {
	store Store
	disk  *Cache // keeps a copy of each manifest read, so a restart need not ask the store; nil: none

	mu      sync.Mutex
	lru     *list.List // of *manifestEntry
	byKey   map[string]*list.Element
	files   int
	loading map[string]*manifestCall
}

type manifestEntry struct {
	key string
	m   *Manifest
}

type manifestCall struct {
	done chan struct{}
	m    *Manifest
	err  error
}

func newManifestCache(store Store, disk *Cache) *manifestCache {
	return &manifestCache{store: store, disk: disk, lru: list.New(), byKey: map[string]*list.Element{}, loading: map[string]*manifestCall{}}
}

func (mc *manifestCache) get(ctx context.Context, appID, deployID string) (*Manifest, error) {
	key := manifestKey(appID, deployID)
	mc.mu.Lock()
	if el, ok := mc.byKey[key]; ok {
		mc.lru.MoveToFront(el)
		mc.mu.Unlock()
		return el.Value.(*manifestEntry).m, nil
	}
	if cl, ok := mc.loading[key]; ok {
		mc.mu.Unlock()
		select {
		case <-cl.done:
			return cl.m, cl.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	cl := &manifestCall{done: make(chan struct{})}
	mc.loading[key] = cl
	mc.mu.Unlock()

	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	cl.m, cl.err = mc.load(lctx, key)
	cancel()
	mc.mu.Lock()
	delete(mc.loading, key)
	if cl.err == nil {
		mc.byKey[key] = mc.lru.PushFront(&manifestEntry{key: key, m: cl.m})
		mc.files += len(cl.m.Files)
		for mc.files > maxManifestFiles && mc.lru.Len() > 1 {
			el := mc.lru.Back()
			e := el.Value.(*manifestEntry)
			mc.lru.Remove(el)
			delete(mc.byKey, e.key)
			mc.files -= len(e.m.Files)
		}
	}
	mc.mu.Unlock()
	close(cl.done)
	return cl.m, cl.err
}

// load reads the manifest at key: from the disk cache's copy when there is one (a kept copy
// is served only if it parses), else from the store, keeping a copy.
func (mc *manifestCache) load(ctx context.Context, key string) (*Manifest, error) {
	if mc.disk == nil {
		return mc.fetch(ctx, key)
	}
	fill := func(ctx context.Context, w io.Writer) error {
		body, err := mc.open(ctx, key)
		if err != nil {
			return err
		}
		defer body.Close()
		_, err = io.Copy(w, body)
		return err
	}
	var kept *Manifest // a kept copy's manifest, read once by its check
	check := func(p string) bool {
		b, err := os.ReadFile(p)
		if err != nil || len(b) > maxManifestBytes {
			return false
		}
		kept, err = parseManifest(b)
		return err == nil
	}
	p, err := mc.disk.local(ctx, key, fill, check)
	if err != nil {
		return nil, err
	}
	if kept != nil {
		return kept, nil
	}
	b, err := os.ReadFile(p)
	if err != nil { // evicted at once (a manifest near the cache's size) or the folder wiped
		return mc.fetch(ctx, key)
	}
	return parseManifest(b)
}

// fetch reads the manifest at key from the store.
func (mc *manifestCache) fetch(ctx context.Context, key string) (*Manifest, error) {
	body, err := mc.open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	return parseManifest(b)
}

// open opens the manifest at key in the store, no longer than maxManifestBytes.
func (mc *manifestCache) open(ctx context.Context, key string) (io.ReadCloser, error) {
	body, info, err := mc.store.Bucket.Get(ctx, key, nil)
	if errors.Is(err, objectstore.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if info.Size > maxManifestBytes {
		body.Close()
		return nil, errors.New("sites: manifest too large")
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(body, maxManifestBytes), body}, nil
}
