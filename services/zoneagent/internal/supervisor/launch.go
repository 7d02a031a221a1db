package supervisor

import (
	"context"
	"maps"

	"tori.dev/services/zoneagent/internal/revision"
)

// launcher starts the instances of one revision from what preparing it left (or what was
// read back after a nap or an agent restart): its tree or image, its environment snapshot,
// its process types' commands.
type launcher interface {
	// processes are the revision's process types, web first (revision.Declared).
	processes() []revision.Process
	// start runs instance n of process type pt. A web instance gets a PORT of its own and is
	// returned once it answers its health check; any other gets no PORT and is returned as
	// soon as it runs.
	start(ctx context.Context, pt revision.Process, n int) (*proc, error)
}

// instanceEnv is an instance's variables: the deploy's, with TORI_PROCESS naming it.
func instanceEnv(vars map[string]string, name string) map[string]string {
	out := maps.Clone(vars)
	if out == nil {
		out = map[string]string{}
	}
	out["TORI_PROCESS"] = name
	return out
}

// processOf is the declared process type named ptype, if the launcher's revision has one.
func processOf(ln launcher, ptype string) (revision.Process, bool) {
	for _, p := range ln.processes() {
		if p.Name == ptype {
			return p, true
		}
	}
	return revision.Process{}, false
}

// sourceLaunch starts a source revision's instances in the sandbox, from its built tree.
type sourceLaunch struct {
	s          *SourceRuntime
	rev        revision.Revision
	dir        string
	healthPath string
	vars       map[string]string
	redactor   *Redactor
	procs      []revision.Process
}

func (l *sourceLaunch) processes() []revision.Process { return l.procs }

func (l *sourceLaunch) start(ctx context.Context, pt revision.Process, n int) (*proc, error) {
	return l.s.startInstance(ctx, l, pt, n) // sourceprocess.go
}

// imageLaunch starts an image revision's instances as containers.
type imageLaunch struct {
	i        *ImageRuntime
	rev      revision.Revision
	vars     map[string]string
	redactor *Redactor
	procs    []revision.Process
}

func (l *imageLaunch) processes() []revision.Process { return l.procs }

func (l *imageLaunch) start(ctx context.Context, pt revision.Process, n int) (*proc, error) {
	return l.i.startContainer(ctx, l, pt, n) // container.go
}
