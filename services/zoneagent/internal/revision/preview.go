package revision

// Preview is a preview of an app on this zone: the revision its host serves, or a tombstone
// once it was removed (expired, deleted, or its app deleted), whose host answers 410.
type Preview struct {
	ID, AppID, Slug, DeployID string
	Kind                      Kind
	Removed                   bool
}
