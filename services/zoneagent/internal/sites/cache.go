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
//
// The copies outlive the process: a restarted edge finds what the last one cached (see
// adopt.go) and checks each such copy against its manifest's digest the first time it is
// asked for, so a restart does not fetch every site's files again.
type Cache struct {
	store   Store
	dir     string
	max     int64
	maxFile int64

	mu      sync.Mutex
	lru     *list.List // of *entry; front: most recently used
	byKey   map[string]*list.Element
	left    map[string]*list.Element // copies an earlier run left, by file name, not yet asked for
	used    int64
	filling map[string]*call

	manifests *manifestCache
}

type entry struct {
	key, name, path string // key is "" while the copy is one an earlier run left
	size            int64
}

// call is one fetch in flight that concurrent callers wait for.
type call struct {
	done chan struct{}
	err  error
}

// NewCache makes a cache of at most maxBytes in dir, keeping the copies an earlier run left
// there (trimmed to the cap) and removing its unfinished downloads.
func NewCache(store Store, dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, errors.New("sites: the cache size must be positive")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	c := &Cache{
		store: store, dir: dir, max: maxBytes, maxFile: max(maxBytes/8, 1),
		lru: list.New(), byKey: map[string]*list.Element{}, left: map[string]*list.Element{}, filling: map[string]*call{},
	}
	c.manifests = newManifestCache(store, c)
	if err := c.adopt(); err != nil {
		return nil, err
	}
	return c, nil
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
	if f.Size > c.maxFile {
		cacheOpens.WithLabelValues("ranged").Inc()
		return &Object{ReadSeekCloser: newRangeReader(ctx, c.store.Bucket, bundleKey(appID, deployID), f.Offset, f.Size), Name: name, File: f}, nil
	}
	key := fileKey(appID, deployID, name)
	// The closures stay on the stack (they do not escape local), and the bundle's key is
	// built only when a copy is fetched: a cache hit allocates nothing for them.
	fill := func(ctx context.Context, w io.Writer) error {
		return c.fetchRange(ctx, bundleKey(appID, deployID), f, w)
	}
	check := func(p string) bool { return copyMatches(p, f) }
	// Twice at most: a copy found missing (the folder wiped) is dropped and fetched again.
	for range 2 {
		p, err := c.local(ctx, key, fill, check)
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

// local is the path of the cached copy of the object named key, written by fill first if
// it is not cached. A copy an earlier run left is served only once check has passed on it.
func (c *Cache) local(ctx context.Context, key string, fill func(context.Context, io.Writer) error, check func(path string) bool) (string, error) {
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
		name := localName(key)
		p := filepath.Join(c.dir, name)
		left, wasLeft := c.left[name]
		c.mu.Unlock()

		if wasLeft && check(p) {
			cacheOpens.WithLabelValues("kept").Inc()
			c.mu.Lock()
			delete(c.filling, key)
			if c.left[name] == left { // not evicted meanwhile
				delete(c.left, name)
				left.Value.(*entry).key = key
				c.byKey[key] = left
				c.lru.MoveToFront(left)
			}
			c.mu.Unlock()
			close(cl.done)
			return p, nil
		}
		if wasLeft { // not the bytes the manifest names (a write cut short by a crash): replaced
			c.mu.Lock()
			if c.left[name] == left {
				c.remove(left)
			}
			c.mu.Unlock()
		}
		cacheOpens.WithLabelValues("miss").Inc()
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fillTimeout)
		size, err := c.write(fctx, p, fill)
		cancel()
		cl.err = err
		c.mu.Lock()
		delete(c.filling, key)
		if cl.err == nil {
			c.byKey[key] = c.lru.PushFront(&entry{key: key, name: name, path: p, size: size})
			c.used += size
			c.evict()
		}
		c.mu.Unlock()
		close(cl.done)
		return p, cl.err
	}
}

// write makes p from what fill writes, through a temporary file, so p is whole or absent;
// it returns p's size.
func (c *Cache) write(ctx context.Context, p string, fill func(context.Context, io.Writer) error) (int64, error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil { // the folder may have been wiped
		return 0, err
	}
	tmp, err := os.CreateTemp(c.dir, ".fill-"+filepath.Base(p)+".")
	if err != nil {
		return 0, err
	}
	counted := &countingWriter{w: tmp}
	err = fill(ctx, counted)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return counted.n, err
}

// fetchRange writes file f's bytes of the bundle to w.
func (c *Cache) fetchRange(ctx context.Context, bundle string, f File, w io.Writer) error {
	if f.Size == 0 {
		return nil // an empty file: nothing to ask
	}
	body, _, err := c.store.Bucket.Get(ctx, bundle, &objectstore.Range{Start: f.Offset, End: f.Offset + f.Size - 1})
	if err != nil {
		if errors.Is(err, objectstore.ErrNotFound) {
			return ErrNotFound // listed in the manifest, gone from the store: being removed
		}
		return err
	}
	defer body.Close()
	n, err := io.Copy(w, io.LimitReader(body, f.Size))
	if err == nil && n != f.Size {
		err = fmt.Errorf("sites: %s gave %d bytes of a file of %d", bundle, n, f.Size)
	}
	return err
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (cw *countingWriter) Write(b []byte) (int, error) {
	n, err := cw.w.Write(b)
	cw.n += int64(n)
	return n, err
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
	if e.key != "" && c.byKey[e.key] == el {
		delete(c.byKey, e.key)
	}
	if c.left[e.name] == el {
		delete(c.left, e.name)
	}
	c.used -= e.size
	os.Remove(e.path)
}

// localName is a copy's file name: a digest of its key, so no key can name a path outside
// the folder and every name is the same length.
func localName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}
