package sites

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"tori.dev/pkg/objectstore"
)

// CopyRevision publishes revision from's files again as revision to of the same app (a
// promoted preview: its bundle is reused instead of fetching and unpacking the artifact
// again). The source bundle is read once, front to back, and streamed into to's bundle as
// PublishFiles does (each file typed and hashed again on the way); ErrNotFound when from's
// manifest or bundle is gone. A failure leaves nothing of to (PublishFiles gives the upload
// up).
func (s Store) CopyRevision(ctx context.Context, appID, from, to string) error {
	if !validID(appID) || !validID(from) || !validID(to) {
		return fmt.Errorf("sites: invalid app or deploy id %q/%q/%q", appID, from, to)
	}
	m, err := newManifestCache(s, nil).load(ctx, manifestKey(appID, from))
	if err != nil {
		return err
	}
	names := make([]string, 0, len(m.Files))
	for name := range m.Files {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(m.Files[a].Offset, m.Files[b].Offset) })
	body, _, err := s.Bucket.Get(ctx, bundleKey(appID, from), nil)
	if errors.Is(err, objectstore.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	defer body.Close()
	return s.PublishFiles(ctx, appID, to, func(add func(string, int64, io.Reader) error) error {
		var pos int64
		for _, name := range names {
			f := m.Files[name]
			if f.Offset < pos || f.Size < 0 {
				return fmt.Errorf("sites: %s's manifest lists overlapping files", from)
			}
			if _, err := io.CopyN(io.Discard, body, f.Offset-pos); err != nil {
				return err
			}
			if err := add(name, f.Size, io.LimitReader(body, f.Size)); err != nil {
				return err
			}
			pos = f.Offset + f.Size
		}
		return nil
	})
}
