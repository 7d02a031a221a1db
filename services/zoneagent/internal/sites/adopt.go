package sites

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"
)

// copyName matches a finished copy's name in the cache folder; fillName an unfinished
// download's. Nothing else there is the cache's, so nothing else is kept or removed.
var (
	copyName = regexp.MustCompile(`^[0-9a-f]{64}$`)
	fillName = regexp.MustCompile(`^\.fill-[0-9a-f]{64}\.[0-9]+$`)
)

// adopt takes over the copies an earlier run left in the folder, oldest first out, and
// removes its unfinished downloads. A copy's name is a digest of its key, so a kept copy is
// only known by name until a request asks for its key; it is then checked (copyMatches)
// before it is served, since the earlier run may have stopped between writing and syncing.
func (c *Cache) adopt() error {
	found, err := os.ReadDir(c.dir)
	if err != nil {
		return err
	}
	type leftCopy struct {
		name    string
		size    int64
		modTime time.Time
	}
	var kept []leftCopy
	for _, e := range found {
		switch {
		case fillName.MatchString(e.Name()):
			os.Remove(filepath.Join(c.dir, e.Name()))
		case copyName.MatchString(e.Name()) && e.Type().IsRegular():
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			kept = append(kept, leftCopy{e.Name(), info.Size(), info.ModTime()})
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].modTime.After(kept[j].modTime) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range kept { // newest first, so the oldest end at the back and go first
		c.left[k.name] = c.lru.PushBack(&entry{name: k.name, path: filepath.Join(c.dir, k.name), size: k.size})
		c.used += k.size
	}
	c.evict()
	return nil
}

// copyMatches reports whether the copy at p holds exactly file f's bytes: its size and the
// digest its ETag names.
func copyMatches(p string, f File) bool {
	fh, err := os.Open(p)
	if err != nil {
		return false
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(fh, f.Size+1))
	if err != nil || n != f.Size {
		return false
	}
	return f.ETag == etag(h.Sum(nil))
}
