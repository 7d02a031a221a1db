package main

import (
	"os"
	"path/filepath"

	"tori.dev/pkg/objectstore"
	"tori.dev/services/zoneagent/internal/config"
	"tori.dev/services/zoneagent/internal/sites"
)

// openSiteStore is the zone's site store (its own bucket, its own credentials), which the
// runtime publishes static revisions into.
func openSiteStore(cfg config.Config) (*sites.Store, error) {
	bucket, err := objectstore.New(cfg.ObjectStoreConfig())
	if err != nil {
		return nil, err
	}
	// Scratch folders that a run of an earlier version (which unpacked a site before
	// publishing it) stopped mid-publication left behind; publication uses none now.
	old, _ := filepath.Glob(filepath.Join(cfg.EdgeCacheDir(), "publish-*"))
	for _, dir := range old {
		os.RemoveAll(dir)
	}
	return &sites.Store{Bucket: bucket}, nil
}

// openSites is the site store as the edge reads it and the edge's bounded cache in front of
// it (in EDGE_CACHE_DIR/files). The cache folder is kept across restarts: its copies are of
// objects that never change, so a restarted edge serves them (each checked against its
// manifest's digest once) instead of fetching every site again.
func openSites(cfg config.EdgeProcess) (*sites.Store, *sites.Cache, error) {
	bucket, err := objectstore.New(cfg.ObjectStoreConfig())
	if err != nil {
		return nil, nil, err
	}
	store := &sites.Store{Bucket: bucket}
	cache, err := sites.NewCache(*store, filepath.Join(cfg.EdgeCacheDir(), "files"), cfg.CacheBytes)
	if err != nil {
		return nil, nil, err
	}
	return store, cache, nil
}
