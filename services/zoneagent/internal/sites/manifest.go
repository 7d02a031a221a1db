package sites

import (
	"encoding/json"
	"fmt"
	"path"
)

// manifestVersion is written into every manifest, so a later layout can tell old ones apart.
const manifestVersion = 1

// Manifest lists a published revision's files: what the edge needs to answer a path (is
// there such a file, or a folder with an index.html) without asking the store, and each
// file's size and content type, decided once at publication.
type Manifest struct {
	Version int             `json:"version"`
	Files   map[string]File `json:"files"` // by slash-separated path in the site
}

// File is one file of a revision: its bytes are [Offset, Offset+Size) of the bundle.
type File struct {
	Offset      int64  `json:"offset"`
	Size        int64  `json:"size"`
	ContentType string `json:"type"`
	ETag        string `json:"etag"` // names its bytes: the first half of their SHA-256, in hex, quoted (etag)
}

func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sites: manifest: %w", err)
	}
	if m.Version != manifestVersion {
		return nil, fmt.Errorf("sites: manifest version %d, want %d", m.Version, manifestVersion)
	}
	return &m, nil
}

// resolve finds the file a cleaned request path names, as a folder-serving web server does:
// the file itself, else the folder's index.html ("" is the site's root).
func (m *Manifest) resolve(name string) (string, File, bool) {
	if name != "" {
		if f, ok := m.Files[name]; ok {
			return name, f, true
		}
	}
	index := path.Join(name, "index.html")
	f, ok := m.Files[index]
	return index, f, ok
}
