package main

import (
	"os"
	"path/filepath"

	"tori.dev/pkg/objectstore"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/sites"
)

// openSites is the zone's site store (its own bucket, its own credentials) and the edge's
// bounded cache in front of it (in EDGE_CACHE_DIR/files; the agent unpacks static artifacts
// into EDGE_CACHE_DIR/publish-* while it publishes them). The cache folder is emptied at start: nothing in it is needed
// to serve a site, and whatever the edge asks for again is fetched from the store.
func openSites(cfg config.Config) (*sites.Store, *sites.Cache, error) {
	bucket, err := objectstore.New(cfg.ObjectStoreConfig())
	if err != nil {
		return nil, nil, err
	}
	store := &sites.Store{Bucket: bucket}
	// Scratch folders that a run of an earlier version (which unpacked a site before
	// publishing it) stopped mid-publication left behind; publication uses none now.
	old, _ := filepath.Glob(filepath.Join(cfg.EdgeCacheDir(), "publish-*"))
	for _, dir := range old {
		os.RemoveAll(dir)
	}
	cache, err := sites.NewCache(*store, filepath.Join(cfg.EdgeCacheDir(), "files"), cfg.CacheBytes)
	if err != nil {
		return nil, nil, err
	}
	return store, cache, nil
}
