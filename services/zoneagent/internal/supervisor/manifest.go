package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/revision"
)

// ManifestName is the manifest file at the root of a source tarball.
const ManifestName = "tori.json"

// Manifest says how to build, release and start a source deploy (see README.md). It is
// optional: what it leaves out, detection decides (plan.go).
type Manifest struct {
	// Present: the tree has a tori.json, whatever it says.
	Present bool `json:"-"`
	// Build runs once in the source tree, through /bin/sh -c, within the plan's build time.
	Build string `json:"build"`
	// Start runs the service through /bin/sh -c; it must listen on $PORT.
	Start string `json:"start"`
	// Release is run as the release Job before traffic moves: a list of arguments or a
	// string split on whitespace. A release part sent with the deploy wins over it.
	Release json.RawMessage `json:"release"`
	// HealthPath is requested until it answers below 500 before the edge switches; default /.
	HealthPath string `json:"healthPath"`
	// RawProcesses is `processes`: an object of process type name → command line.
	RawProcesses json.RawMessage `json:"processes"`
	// Processes are RawProcesses read and checked, web first (parseProcesses).
	Processes []revision.Process `json:"-"`
}

// ErrStartAndWeb: tori.json says twice how web starts.
var ErrStartAndWeb = errors.New(ManifestName + " gives both start and processes.web: keep one")

// MaxManifestBytes caps the manifest: a few command lines fit in far less.
const MaxManifestBytes = 64 << 10

// ReadManifest reads and checks dir's manifest, if it has one. It is read as every file of a
// customer tree is (artifact.ReadFile): a regular file inside the tree, never a link, FIFO or
// device, and at most MaxManifestBytes; such a refusal wraps artifact.ErrUnsafe. Whether
// anything says how to start the service is for the plan (planBuild) to decide.
func ReadManifest(dir string) (Manifest, []string, error) {
	m := Manifest{HealthPath: "/"}
	b, err := artifact.ReadFile(dir, ManifestName, MaxManifestBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil, nil
	}
	if err != nil {
		return m, nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, nil, fmt.Errorf("%s: %v", ManifestName, err)
	}
	m.Present = true
	m.Build, m.Start = strings.TrimSpace(m.Build), strings.TrimSpace(m.Start)
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
	if m.Processes, err = parseProcesses(m.RawProcesses); err != nil {
		return m, nil, fmt.Errorf("%s: processes: %v", ManifestName, err)
	}
	for _, p := range m.Processes {
		if p.Name == revision.Web && m.Start != "" {
			return m, nil, ErrStartAndWeb
		}
	}
	return m, release, nil
}

// parseProcesses reads `processes`: an object of name → command line, each name within the
// rule and each command not empty; web first, then by name.
func parseProcesses(raw json.RawMessage) ([]revision.Process, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var byName map[string]string
	if err := json.Unmarshal(raw, &byName); err != nil {
		return nil, errors.New("want an object of process type names to command lines")
	}
	out := make([]revision.Process, 0, len(byName))
	for name, cmd := range byName {
		out = append(out, revision.Process{Name: name, Command: strings.TrimSpace(cmd)})
	}
	revision.SortProcesses(out)
	if err := revision.CheckProcesses(out); err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), revision.ErrBadProcess.Error()+": "))
	}
	return out, nil
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

// manifestFailure is the failure code of a manifest ReadManifest refused: a hostile one
// (a link, a FIFO, a device, too large) is an invalid artifact, like a hostile tarball; a
// missing or malformed one, an invalid source.
func manifestFailure(err error) *revision.FailError {
	if errors.Is(err, artifact.ErrUnsafe) {
		return &revision.FailError{Code: revision.CodeInvalidArtifact, Message: err.Error()}
	}
	return &revision.FailError{Code: CodeInvalidSource, Message: err.Error()}
}
