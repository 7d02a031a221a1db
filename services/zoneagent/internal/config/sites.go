package config

import (
	"errors"
	"path/filepath"

	"tori.dev/pkg/objectstore"
)

// ZoneObjectStore is the zone's own account and bucket in the object store, as bin/bootstrap
// writes them to the zone agent's file (docs/objectstore.md): the zone's sites live there.
type ZoneObjectStore struct {
	ObjectStoreURL    string `env:"OBJECT_STORE_URL"`
	ObjectStoreAccess string `env:"ZONEAGENT_OBJECT_STORE_ACCESS_KEY"`
	ObjectStoreSecret string `env:"ZONEAGENT_OBJECT_STORE_SECRET_KEY" secret:"true"`
	ObjectStoreBucket string `env:"ZONEAGENT_OBJECT_STORE_BUCKET"`
}

// ObjectStoreConfig is the zone's way into its bucket.
func (z *ZoneObjectStore) ObjectStoreConfig() objectstore.Config {
	return objectstore.Config{URL: z.ObjectStoreURL, AccessKey: z.ObjectStoreAccess, SecretKey: z.ObjectStoreSecret, Bucket: z.ObjectStoreBucket}
}

func (z *ZoneObjectStore) validate() error {
	if _, err := objectstore.New(z.ObjectStoreConfig()); err != nil {
		return errors.New("OBJECT_STORE_URL and ZONEAGENT_OBJECT_STORE_ACCESS_KEY, _SECRET_KEY and _BUCKET are required (bin/bootstrap writes them to DATA_DIR/secrets/zoneagent.env): " + err.Error())
	}
	return nil
}

// EdgeCache is the edge's local cache of site files (README, "Static sites").
type EdgeCache struct {
	// CacheDir holds the cached copies; empty: edge-cache under DATA_DIR. Emptied at start.
	CacheDir string `env:"EDGE_CACHE_DIR"`
	// CacheBytes caps the copies' total size; the least recently used go first.
	CacheBytes int64 `env:"EDGE_CACHE_BYTES, default=1073741824"`
}

// EdgeCacheDir is where the edge keeps its copies of site files (a cache: nothing there is
// needed to serve a site).
func (c *Config) EdgeCacheDir() string {
	if c.CacheDir != "" {
		return c.CacheDir
	}
	return filepath.Join(c.DataDir, "edge-cache")
}

func (e *EdgeCache) validate() error {
	if e.CacheBytes < 1<<20 {
		return errors.New("EDGE_CACHE_BYTES must be at least 1 MiB")
	}
	return nil
}
