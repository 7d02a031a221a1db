package sites

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"tori.dev/pkg/objectstore"
)

// fillTimeout bounds one download into the cache. A fill is shared by every request waiting
// for the same object, so it does not end with the request that started it.
const fillTimeout = 5 * time.Minute

// Cache serves the zone's site files from the store through a bounded folder of local copies.
// Entries are keyed by object key, which names the revision: a published object never
// changes, so an entry is never stale and needs no revalidation against the store. The least
// recently used entries go when the total passes the cap; a file larger than an eighth of the
// cap is read from the store by ranges instead of being cached, so one file cannot empty the
// cache. A copy removed behind the cache's back (the folder wiped) is fetched again.
type Cache struct {
	store   Store
	dir     string
	max     int64
	maxFile int64

	mu      sync.Mutex
	lru     *list.List // of *entry; front: most recently used
	byKey   map[string]*list.Element
	used    int64
	filling map[string]*call

	manifests *manifestCache
}

type entry struct {
	key, path string
	size      int64
}

// call is one fetch in flight that concurrent callers wait for.
type call struct {
	done chan struct{}
	err  error
}

// cacheFile matches the names the cache writes in its folder (and nothing else there, so
// emptying it can never remove a file the cache did not make).
var cacheFile = regexp.MustCompile(`^(\.fill-)?[0-9a-f]{64}(\.[0-9]+)?$`)

// NewCache makes a cache of at most maxBytes in dir, emptying what an earlier run left there.
func NewCache(store Store, dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, errors.New("sites: the cache size must be positive")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	old, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range old {
		if cacheFile.MatchString(e.Name()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return &Cache{
		store: store, dir: dir, max: maxBytes, maxFile: max(maxBytes/8, 1),
		lru: list.New(), byKey: map[string]*list.Element{}, filling: map[string]*call{},
		manifests: newManifestCache(store),
	}, nil
}

// Used is the bytes the cache holds now.
func (c *Cache) Used() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// Object is one site file opened for serving; the caller closes it.
type Object struct {
	io.ReadSeekCloser
	Name string // the file's path in the site (a folder's index.html when a folder was asked for)
	File
}

// Open finds the file a cleaned request path ("" for the root, no leading slash) names in the
// revision and opens it: ErrNotFound when the revision is not published or has no such file.
func (c *Cache) Open(ctx context.Context, appID, deployID, name string) (*Object, error) {
	if !validID(appID) || !validID(deployID) {
		return nil, ErrNotFound
	}
	m, err := c.manifests.get(ctx, appID, deployID)
	if err != nil {
		return nil, err
	}
	name, f, ok := m.resolve(name)
	if !ok {
		return nil, ErrNotFound
	}
	key := fileKey(appID, deployID, name)
	bundle := bundleKey(appID, deployID)
	if f.Size > c.maxFile {
		cacheOpens.WithLabelValues("ranged").Inc()
		return &Object{ReadSeekCloser: newRangeReader(ctx, c.store.Bucket, bundle, f.Offset, f.Size), Name: name, File: f}, nil
	}
	// Twice at most: a copy found missing (the folder wiped) is dropped and fetched again.
	for range 2 {
		p, err := c.local(ctx, key, bundle, f)
		if err != nil {
			return nil, err
		}
		fh, err := os.Open(p)
		if err == nil {
			return &Object{ReadSeekCloser: fh, Name: name, File: f}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		c.drop(key)
	}
	return nil, fmt.Errorf("sites: the cached copy of %s keeps disappearing", key)
}

// local is the path of the cached copy of file f (key) of a revision's bundle, fetched
// first if it is not cached.
func (c *Cache) local(ctx context.Context, key, bundle string, f File) (string, error) {
	for {
		c.mu.Lock()
		if el, ok := c.byKey[key]; ok {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			cacheOpens.WithLabelValues("hit").Inc()
			return el.Value.(*entry).path, nil
		}
		if cl, ok := c.filling[key]; ok {
			c.mu.Unlock()
			select {
			case <-cl.done:
				if cl.err != nil {
					return "", cl.err
				}
				continue // now cached (or already evicted again: then fetched anew)
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		cl := &call{done: make(chan struct{})}
		c.filling[key] = cl
		c.mu.Unlock()
		cacheOpens.WithLabelValues("miss").Inc()

		p := filepath.Join(c.dir, localName(key))
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fillTimeout)
		cl.err = c.fetch(fctx, bundle, f, p)
		cancel()
		c.mu.Lock()
		delete(c.filling, key)
		if cl.err == nil {
			c.byKey[key] = c.lru.PushFront(&entry{key: key, path: p, size: f.Size})
			c.used += f.Size
			c.evict()
		}
		c.mu.Unlock()
		close(cl.done)
		return p, cl.err
	}
}

// fetch downloads file f's bytes of the bundle into p through a temporary file, so p is
// whole or absent.
func (c *Cache) fetch(ctx context.Context, bundle string, f File, p string) error {
	var body io.ReadCloser = io.NopCloser(strings.NewReader("")) // an empty file: nothing to ask
	if f.Size > 0 {
		var err error
		body, _, err = c.store.Bucket.Get(ctx, bundle, &objectstore.Range{Start: f.Offset, End: f.Offset + f.Size - 1})
		if err != nil {
			if errors.Is(err, objectstore.ErrNotFound) {
				return ErrNotFound // listed in the manifest, gone from the store: being removed
			}
			return err
		}
	}
	defer body.Close()
	if err := os.MkdirAll(c.dir, 0o700); err != nil { // the folder may have been wiped
		return err
	}
	tmp, err := os.CreateTemp(c.dir, ".fill-"+filepath.Base(p)+".")
	if err != nil {
		return err
	}
	n, err := io.Copy(tmp, io.LimitReader(body, f.Size))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != f.Size {
		err = fmt.Errorf("sites: %s gave %d bytes of a file of %d", bundle, n, f.Size)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// evict drops least recently used copies until the total fits the cap. A copy being served
// stays readable through its open file after its name is removed.
func (c *Cache) evict() {
	for c.used > c.max {
		el := c.lru.Back()
		if el == nil {
			return
		}
		c.remove(el)
	}
}

// drop forgets key's copy (found missing on disk).
func (c *Cache) drop(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.remove(el)
	}
}

func (c *Cache) remove(el *list.Element) {
	e := el.Value.(*entry)
	c.lru.Remove(el)
	delete(c.byKey, e.key)
	c.used -= e.size
	os.Remove(e.path)
}

// localName is a copy's file name: a digest of its key, so no key can name a path outside
// the folder and every name is the same length.
func localName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
