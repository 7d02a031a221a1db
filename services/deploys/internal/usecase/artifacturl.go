package usecase

import (
	"context"
	"errors"
	"time"

	"tori.dev/services/deploys/internal/deploy"
)

// ArtifactURLLifetime is how long a URL handed to a zone opens its artifact. The store checks
// a presigned URL when a request starts, so a download begun in time may run past it; the
// zone asks for one right before it fetches, so minutes are enough, and a leaked URL soon dies.
const ArtifactURLLifetime = 5 * time.Minute

// ArtifactLinks makes URLs that read one object without credentials (objects.S3).
type ArtifactLinks interface {
	PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// ArtifactURL is a short-lived URL zone fetches the app's deploy's artifact by: only while
// zone hosts the deploy (ErrNotHosted otherwise, the same answer for an unknown deploy, another
// app's or another zone's), and only for a deploy with an artifact (ErrNoArtifact). A zone
// holds no credentials to the artifacts' bucket; this URL is its only way to one artifact.
func (s *Service) ArtifactURL(ctx context.Context, zone, appID, deployID string) (string, time.Time, error) {
	d, hosted, err := s.hostedDeploy(ctx, zone, appID, deployID)
	if err != nil {
		return "", time.Time{}, err
	}
	if !hosted {
		return "", time.Time{}, deploy.ErrNotHosted
	}
	if d.ArtifactKey == "" {
		return "", time.Time{}, deploy.ErrNoArtifact
	}
	if s.links == nil {
		return "", time.Time{}, errors.New("usecase: the artifact store makes no presigned URLs")
	}
	expires := s.now().Add(ArtifactURLLifetime)
	url, err := s.links.PresignGet(ctx, d.ArtifactKey, ArtifactURLLifetime)
	if err != nil {
		return "", time.Time{}, err
	}
	return url, expires, nil
}
