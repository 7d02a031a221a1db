package buildplan

import (
	"fmt"
	"strings"
)

// PythonPackages is where pip installs requirements.txt's packages, inside the tree (so
// they go with the revision), and the PYTHONPATH the build and the service get.
const PythonPackages = ".tori/python"

// python plans a Python service: requirements.txt installed with pip when it lists anything,
// started by app.py, else main.py. Those two names are a guess (the usual entry points of
// Flask-style and script services); a Procfile's web: line or tori.json says otherwise.
func python(files Files) (Plan, error) {
	p := Plan{Detected: Python, Env: map[string]string{"PYTHONUNBUFFERED": "1"}}
	var why []string
	if b, ok := files[RequirementsTxt]; ok {
		if n := requirements(b); n > 0 {
			p.Build = "python3 -m pip install -r " + RequirementsTxt + " --target " + PythonPackages
			p.Env["PYTHONPATH"] = "/app/" + PythonPackages
			why = append(why, fmt.Sprintf("requirements.txt lists %d: pip install --target %s", n, PythonPackages))
		} else {
			why = append(why, "requirements.txt lists nothing: nothing to install")
		}
	}
	switch {
	case files.has(AppPy):
		p.Start = "python3 app.py"
		why = append(why, "started by python3 app.py (a guess from its name)")
	case files.has(MainPy):
		p.Start = "python3 main.py"
		why = append(why, "started by python3 main.py (a guess from its name)")
	default:
		p.Reason = "python: " + strings.Join(why, "; ")
		return p, &noStartError{"a Python source without app.py or main.py"}
	}
	p.Reason = "python: " + strings.Join(why, "; ")
	return p, nil
}

// requirements counts the lines of a requirements.txt that ask for something: not blank,
// not a comment.
func requirements(b []byte) int {
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}
