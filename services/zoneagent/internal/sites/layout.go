// Package sites keeps a zone's live static sites in the zone's own bucket of the object
// store and serves them back through a bounded local cache, so any edge of a zone serves any
// of its sites and nothing the edge needs lives in one machine's folder.
//
// The layout (docs/conventions.md, "Site objects"): a revision's files are one object,
// sites/<app id>/<deploy id>/bundle (their bytes one after the other), and its manifest,
// written last, is sites/<app id>/<deploy id>/manifest.json (each file's place in the bundle,
// size, content type and ETag). A revision is published exactly when its manifest exists; a
// revision's objects never change once published, so any copy of a file (the edge's cache)
// never goes stale.
package sites

import "errors"

// ErrNotFound: the revision is not published, or holds no file by that name.
var ErrNotFound = errors.New("sites: no such file")

const root = "sites/"

// appPrefix is the prefix of every object of an app's sites.
func appPrefix(appID string) string { return root + appID + "/" }

// revisionPrefix is the prefix of every object of one revision.
func revisionPrefix(appID, deployID string) string { return appPrefix(appID) + deployID + "/" }

// manifestKey names a revision's manifest, the last object a publication writes.
func manifestKey(appID, deployID string) string {
	return revisionPrefix(appID, deployID) + "manifest.json"
}

// bundleKey names a revision's bundle: every file's bytes, in the order its manifest places them.
func bundleKey(appID, deployID string) string {
	return revisionPrefix(appID, deployID) + "bundle"
}

// fileKey names one file of a revision in the edge's cache (never an object of the store);
// name is the file's slash-separated path in the site.
func fileKey(appID, deployID, name string) string {
	return revisionPrefix(appID, deployID) + "files/" + name
}

// validID refuses ids that would make a key reach outside its prefix. App and deploy ids
// are UUIDs; anything with a slash or a dot segment is refused rather than repaired.
func validID(id string) bool {
	if id == "" || id == "." || id == ".." {
		return false
	}
	for _, c := range id {
		if c == '/' || c == '\\' || c < 0x20 {
			return false
		}
	}
	return true
}
