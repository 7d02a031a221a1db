package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ManifestName is the manifest file at the root of a source tarball.
const ManifestName = "tori.json"

// Manifest says how to build, release and start a source deploy (see README.md).
type Manifest struct {
	// Build runs once in the source tree, through /bin/sh -c, within the plan's build time.
	Build string `json:"build"`
	// Start runs the service through /bin/sh -c; it must listen on $PORT.
	Start string `json:"start"`
	// Release is run as the release Job before traffic moves: a list of arguments or a
	// string split on whitespace. A release part sent with the deploy wins over it.
	Release json.RawMessage `json:"release"`
	// HealthPath is requested until it answers below 500 before the edge switches; default /.
	HealthPath string `json:"healthPath"`
}

// ReadManifest reads and checks dir's manifest.
func ReadManifest(dir string) (Manifest, []string, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil, fmt.Errorf("no %s at the root of the source", ManifestName)
	}
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, nil, fmt.Errorf("%s: %v", ManifestName, err)
	}
	if strings.TrimSpace(m.Start) == "" {
		return m, nil, fmt.Errorf("%s: start is required", ManifestName)
	}
	if m.HealthPath == "" {
		m.HealthPath = "/"
	}
	if !strings.HasPrefix(m.HealthPath, "/") {
		return m, nil, fmt.Errorf("%s: healthPath must start with /", ManifestName)
	}
	release, err := parseRelease(m.Release)
	if err != nil {
		return m, nil, fmt.Errorf("%s: release: %v", ManifestName, err)
	}
	return m, release, nil
}

func parseRelease(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.Fields(s), nil
	}
	return nil, errors.New("want a list of arguments or a string")
}
