// Package buildplan decides how a service's source is built and started when its tori.json
// does not say (docs: services/zoneagent/README.md, "Builds without a manifest"): it looks at
// a few files at the root of the tree, as Heroku's buildpacks, Render and Railpack do, and
// names the build command, the start command and why. It reads nothing itself: the runner
// hands it the files (Inputs), so detection is a pure function of them.
//
// It lives in the zone, not in the deploys service, because the zone holds the unpacked tree
// the build runs on (read through os.Root, links refused), already reads tori.json there, and
// what is detected is then exactly what is built; the deploys service learns the plan from
// the zone's report (DEPLOY_STEP_BUILD_DETECTED) and shows it on the deploy.
package buildplan

import (
	"errors"
	"strings"

	"tori.dev/services/zoneagent/internal/revision"
)

// The kinds of source detection names (Plan.Detected).
const (
	Node     = "node"
	Python   = "python"
	Go       = "go"
	Procfile = "procfile"  // only a Procfile's web: line
	Manifest = "tori.json" // only tori.json's commands
)

// Root files detection looks at. Contents are read for those whose Input.Read is set;
// for the others only their presence matters.
const (
	ManifestFile    = "tori.json"
	ProcfileFile    = "Procfile"
	PackageJSON     = "package.json"
	PackageLock     = "package-lock.json"
	NpmShrinkwrap   = "npm-shrinkwrap.json"
	ServerJS        = "server.js"
	RequirementsTxt = "requirements.txt"
	AppPy           = "app.py"
	MainPy          = "main.py"
	GoMod           = "go.mod"
)

// Input is one root file detection may look at.
type Input struct {
	Name string
	Read bool // its contents matter (else only whether it is there)
}

// Inputs is every file Detect looks at.
var Inputs = []Input{
	{ManifestFile, true}, {ProcfileFile, true}, {PackageJSON, true}, {PackageLock, false}, {NpmShrinkwrap, false},
	{ServerJS, false}, {RequirementsTxt, true}, {AppPy, false}, {MainPy, false}, {GoMod, true},
}

// MaxInputBytes bounds each file whose contents are read: a package.json, a Procfile or a
// requirements.txt is a few kilobytes.
const MaxInputBytes = 1 << 20

// Files is the root of a tree as detection sees it: each Input present, by name, with its
// contents when Input.Read (nil otherwise).
type Files map[string][]byte

func (f Files) has(name string) bool { _, ok := f[name]; return ok }

// ManifestCommands is what tori.json says about the build (the runner parses and checks it).
type ManifestCommands struct {
	Build, Start string
	Present      bool // a tori.json is there, whatever it says
	// Processes are tori.json's `processes`, checked (names, commands, no web beside start).
	Processes []revision.Process
	// Release: tori.json gives a release Job, which wins over the Procfile's release: line.
	Release bool
}

// Plan is how a source tree is built and started.
type Plan struct {
	// Detected names the source kind: node, python, go, procfile or tori.json.
	Detected string
	// Build runs once through /bin/sh -c in the tree within the plan's build time; "" none.
	Build string
	// Start runs the service through /bin/sh -c; it must listen on $PORT.
	Start string
	// Reason says what was seen and what it decided, for the deploy's log.
	Reason string
	// Env is set for the build and the service over the deploy's variables: what the
	// detected commands need (PYTHONPATH for the packages pip installed, say).
	Env map[string]string
	// Processes are the types the tree declares, web first (web runs Start): tori.json's
	// `processes`, else the Procfile's lines. Empty when it declares none: one web runs Start.
	Processes []revision.Process
	// Release is the Procfile's release: line, run through the shell as the release Job
	// when neither the deploy nor tori.json gives one; "" none.
	Release string
}

// ProcessList is what the revision runs: its declared types, or one web running Start.
func (p Plan) ProcessList() []revision.Process { return revision.ProcessesOrWeb(p.Processes, p.Start) }

// ErrNothingToStart: neither tori.json, a Procfile nor a recognised source says how to start
// a process.
var ErrNothingToStart = errors.New("nothing says how to start this service: give tori.json a start command " +
	"or processes, add a Procfile, or deploy a recognised source (package.json with a start script, " +
	"requirements.txt with app.py or main.py, or go.mod)")

// Detect makes the plan for files, with m (tori.json's commands) winning where it gives one:
// its build replaces the detected build, its start the detected or Procfile start. When
// several sources are present the first of package.json, Python (requirements.txt, app.py,
// main.py), go.mod is built, in Heroku's buildpack order. A file that is there but cannot be
// read as what it claims to be (a package.json that is not JSON) is an error naming it.
//
// Process types come from tori.json's `processes`, else from the Procfile (its release: line
// is the release Job, not a type). Web runs tori.json's start, else the declared web; the
// detected start becomes web only when nothing declares processes, so a tree may declare
// workers alone.
func Detect(files Files, m ManifestCommands) (Plan, error) {
	pf, err := parseProcfile(files)
	if err != nil {
		return Plan{}, err
	}
	declared, from := m.Processes, "tori.json's processes"
	if len(declared) == 0 {
		declared, from = pf.processes, "the Procfile"
	}
	web, hasWeb := procfile{processes: declared}.web()
	var p Plan
	var why []string
	switch {
	case files.has(PackageJSON):
		p, err = node(files)
	case files.has(RequirementsTxt) || files.has(AppPy) || files.has(MainPy):
		p, err = python(files)
	case files.has(GoMod):
		p, err = golang(files)
	}
	var noStart *noStartError
	if err != nil && !(errors.As(err, &noStart) && (len(declared) > 0 || m.Start != "")) {
		return Plan{}, err
	}
	if p.Reason != "" {
		why = append(why, p.Reason)
	}
	if len(declared) > 0 {
		// Declarations replace the detected start; web is the declared one or tori.json's.
		p.Start = ""
		if p.Detected == "" && from == "the Procfile" {
			p.Detected = Procfile
		}
	}
	if hasWeb {
		p.Start = web
		if from == "the Procfile" {
			why = append(why, "start from the Procfile's web: line")
		} else {
			why = append(why, "start from tori.json's processes.web")
		}
	}
	if m.Build != "" {
		p.Build = m.Build
		why = append(why, "build from tori.json")
	}
	if m.Start != "" {
		p.Start = m.Start
		why = append(why, "start from tori.json")
	}
	if p.Detected == "" && m.Present {
		p.Detected = Manifest
	}
	if len(declared) > 0 {
		for _, d := range declared {
			if d.Name != revision.Web {
				p.Processes = append(p.Processes, d)
			}
		}
		if p.Start != "" {
			p.Processes = append(p.Processes, revision.Process{Name: revision.Web, Command: p.Start})
		}
		revision.SortProcesses(p.Processes)
		names := make([]string, len(p.Processes))
		for i, x := range p.Processes {
			names[i] = x.Name
		}
		why = append(why, "processes from "+from+": "+strings.Join(names, ", "))
	} else if strings.TrimSpace(p.Start) == "" {
		return Plan{}, ErrNothingToStart
	}
	if !m.Release && pf.release != "" {
		p.Release = pf.release
		why = append(why, "release from the Procfile's release: line")
	}
	p.Reason = strings.Join(why, "; ")
	return p, nil
}

// noStartError: the source was recognised but says nothing of how to start; a Procfile or
// tori.json may still.
type noStartError struct{ what string }

func (e *noStartError) Error() string {
	return e.what + ": say how to start the service with a Procfile web: line or tori.json's start"
}

// joinCommands chains build steps so the first failure stops the build.
func joinCommands(steps ...string) string {
	var out []string
	for _, s := range steps {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " && ")
}
