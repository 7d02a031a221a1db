package sites

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"tori.dev/pkg/objectstore"
)

// RemoveRevision deletes a revision's objects: its manifest first, so a revision half
// removed is no longer published (the edge answers it 404 rather than serve half a site),
// then its files. It is idempotent; it returns how many of its files it deleted.
func (s Store) RemoveRevision(ctx context.Context, appID, deployID string) (int, error) {
	if !validID(appID) || !validID(deployID) {
		return 0, fmt.Errorf("sites: invalid app or deploy id %q/%q", appID, deployID)
	}
	if err := s.Bucket.Delete(ctx, manifestKey(appID, deployID)); err != nil {
		return 0, err
	}
	n, err := s.removePrefix(ctx, revisionPrefix(appID, deployID))
	return n, err
}

// RemoveApp deletes every object of an app's sites (a deleted app). Idempotent.
func (s Store) RemoveApp(ctx context.Context, appID string) (int, error) {
	if !validID(appID) {
		return 0, fmt.Errorf("sites: invalid app id %q", appID)
	}
	return s.removePrefix(ctx, appPrefix(appID))
}

// removePrefix deletes every object under prefix. Keys are collected first: deleting while
// the server pages through a listing could make it skip keys.
func (s Store) removePrefix(ctx context.Context, prefix string) (int, error) {
	var keys []string
	if err := s.Bucket.List(ctx, prefix, func(o objectstore.Info) bool {
		keys = append(keys, o.Key)
		return true
	}); err != nil && !errors.Is(err, objectstore.ErrNotFound) {
		return 0, err
	}
	n := 0
	for _, k := range keys {
		if err := s.Bucket.Delete(ctx, k); err != nil {
			return n, err
		}
		n++
		objectsReclaimed.Inc()
	}
	return n, nil
}

// Revisions calls fn once for every revision that has objects in the bucket (published, or
// left half-removed), as app and deploy ids.
func (s Store) Revisions(ctx context.Context, fn func(appID, deployID string)) error {
	seen := map[string]bool{}
	return s.Bucket.List(ctx, root, func(o objectstore.Info) bool {
		parts := strings.SplitN(strings.TrimPrefix(o.Key, root), "/", 3) // <app>/<deploy>/…
		if len(parts) == 3 && !seen[parts[0]+"/"+parts[1]] {
			seen[parts[0]+"/"+parts[1]] = true
			fn(parts[0], parts[1])
		}
		return true
	})
}
