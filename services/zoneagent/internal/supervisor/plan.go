package supervisor

import (
	"errors"
	"io/fs"
	"maps"
	"os"

	"tori.dev/services/zoneagent/internal/artifact"
	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// planBuild reads dir's tori.json and the root files detection looks at, and decides how the
// revision is built and started (buildplan.Detect): tori.json's build and start win where it
// gives them. The release it returns is tori.json's, else the Procfile's release: line (a
// release sent with the deploy wins over both: prepare). Files are read as every file of a customer tree is (artifact.ReadFile). Its
// errors are *revision.FailError: a hostile file is an invalid artifact; a missing start or a
// file that is not what it claims (a broken package.json), an invalid source naming the file.
func (s *SourceRuntime) planBuild(dir string) (buildplan.Plan, Manifest, []string, error) {
	m, release, err := ReadManifest(dir)
	if err != nil {
		return buildplan.Plan{}, m, nil, manifestFailure(err)
	}
	files, err := detectionFiles(dir)
	if err != nil {
		return buildplan.Plan{}, m, nil, manifestFailure(err)
	}
	plan, err := buildplan.Detect(files, buildplan.ManifestCommands{Build: m.Build, Start: m.Start, Present: m.Present,
		Processes: m.Processes, Release: len(release) > 0})
	if err != nil {
		return buildplan.Plan{}, m, nil, &revision.FailError{Code: CodeInvalidSource, Message: err.Error()}
	}
	if plan.Detected == buildplan.Go && s.Sandbox.GoRoot == "" {
		return buildplan.Plan{}, m, nil, &revision.FailError{Code: CodeBuildFailed,
			Message: "this zone has no Go toolchain to build go.mod with (ZONE_GO_ROOT)"}
	}
	if len(release) == 0 && plan.Release != "" {
		release = ShellCommand(plan.Release) // the Procfile's release: line, as Heroku runs it
	}
	return plan, m, release, nil
}

// detectionFiles is the root of dir as buildplan sees it: each of its Inputs present, read
// when its contents matter.
func detectionFiles(dir string) (buildplan.Files, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	files := buildplan.Files{}
	for _, in := range buildplan.Inputs {
		if !in.Read {
			if _, err := root.Lstat(in.Name); err == nil {
				files[in.Name] = nil
			}
			continue
		}
		b, err := artifact.ReadFile(dir, in.Name, buildplan.MaxInputBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		files[in.Name] = b
	}
	return files, nil
}

// withPlanEnv is the deploy's variables with the plan's own over them (PYTHONPATH for the
// packages pip installed, say), for the build, the release Job and the service.
func withPlanEnv(vars map[string]string, plan buildplan.Plan) map[string]string {
	if len(plan.Env) == 0 {
		return vars
	}
	out := maps.Clone(vars)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, plan.Env)
	return out
}
