package supervisor

import (
	"fmt"
	"os"
	"path/filepath"

	"tori.dev/services/zoneagent/internal/revision"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// buildCacheName is the app's build cache in its folder, beside its trees (deploy ids are
// uuids, never this name): inside the app's own filesystem, so it counts against the app's
// disk quota, and under the app's folder, which only the app's uid may open (0700).
const buildCacheName = ".build-cache"

// buildCache is where the app's build cache lives on the host.
func (s *SourceRuntime) buildCache(appID string) string {
	return filepath.Join(s.Identities.AppDir(appID), buildCacheName)
}

// prepareBuildCache makes the app's build cache ready for rev's build: emptied first when
// the deploy asked for it, then present, owned by the app's uid and private to it. It is
// kept between the app's builds and goes with the app's folder when the app is deleted
// (StopApp).
func (s *SourceRuntime) prepareBuildCache(rev revision.Revision) error {
	dir := s.buildCache(rev.AppID)
	if rev.ClearCache {
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("clear the build cache: %w", err)
		}
		logOr(s.Log).Info("build cache cleared", "app", rev.AppID, "deploy", rev.DeployID)
	}
	cred := s.Sandbox.Credential(rev.AppID)
	if cred == nil {
		return fmt.Errorf("app %s has no uid", rev.AppID)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return os.Lchown(dir, int(cred.Uid), int(cred.Gid))
}

// withBuildCache gives a build's sandbox the app's cache and points the package managers'
// caches into it, over the deploy's variables of the same names; any other command is left
// as it is.
func (s *SourceRuntime) withBuildCache(spec sandbox.Spec, stream string, vars map[string]string) sandbox.Spec {
	if stream != "build" {
		return spec
	}
	env := make(map[string]string, len(vars)+4)
	for k, v := range vars {
		env[k] = v
	}
	for k, v := range sandbox.BuildCacheEnv() {
		env[k] = v
	}
	spec.BuildCache = s.buildCache(spec.AppID)
	spec.Env = sandbox.Environ(env, 0)
	return spec
}
