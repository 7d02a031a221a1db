package sandbox

// BuildCacheRoot is where an app's build cache appears inside the sandbox of its builds
// (Spec.BuildCache). Nothing else runs with it: the service's process and its release Job see
// only their tree.
const BuildCacheRoot = "/cache"

// BuildCacheEnv points the package managers' download and build caches into BuildCacheRoot:
// npm's cache, pip's, Go's module cache and Go's build cache. A build gets these over the
// deploy's variables of the same names, so every build of the app fills and reads the one
// cache.
func BuildCacheEnv() map[string]string {
	return map[string]string{
		"npm_config_cache": BuildCacheRoot + "/npm",
		"PIP_CACHE_DIR":    BuildCacheRoot + "/pip",
		"GOMODCACHE":       BuildCacheRoot + "/go/mod",
		"GOCACHE":          BuildCacheRoot + "/go/build",
	}
}
