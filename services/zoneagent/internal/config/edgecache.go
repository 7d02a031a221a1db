package config

import (
	"errors"
	"path/filepath"
)

// EdgeCache is the edge's local cache of site files (README, "Static sites").
type EdgeCache struct {
	// CacheDir holds the cached copies; empty: edge-cache under DATA_DIR. Kept across restarts (each kept copy checked against its digest before it is served).
	CacheDir string `env:"EDGE_CACHE_DIR"`
	// CacheBytes caps the copies' total size; the least recently used go first.
	CacheBytes int64 `env:"EDGE_CACHE_BYTES, default=1073741824"`
}

// EdgeCacheDir is where the edge keeps its copies of site files (a cache: nothing there is
// needed to serve a site).
func (c *Config) EdgeCacheDir() string { return c.cacheDir(c.DataDir) }

// EdgeCacheDir is where the edge keeps its copies of site files.
func (c *EdgeProcess) EdgeCacheDir() string { return c.cacheDir(c.DataDir) }

func (e *EdgeCache) cacheDir(dataDir string) string {
	if e.CacheDir != "" {
		return e.CacheDir
	}
	return filepath.Join(dataDir, "edge-cache")
}

func (e *EdgeCache) validate() error {
	if e.CacheBytes < 1<<20 {
		return errors.New("EDGE_CACHE_BYTES must be at least 1 MiB")
	}
	return nil
}
