// Package console holds the web console's built files (dist/, written by `npm run build`).
//
// A fresh clone has only dist/.gitkeep, so the module vets and builds before npm has run; the
// server then answers a page saying the console is not built yet.
package console

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Files is the built single-page app, rooted at dist/.
func Files() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the path is a constant embedded above
	}
	return sub
}
