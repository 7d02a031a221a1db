package buildplan

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"tori.dev/services/zoneagent/internal/revision"
)

// The detection rule, one row a case: what is at the root of a tree (and what tori.json
// says), and the plan, or the error, it gives.
func TestDetect(t *testing.T) {
	pkg := func(scripts string) []byte { return []byte(`{"name":"x","scripts":{` + scripts + `}}`) }
	for _, c := range []struct {
		name     string
		files    Files
		manifest ManifestCommands
		want     Plan
		wantErr  string // a part of the error's text; "" means none
	}{
		{name: "node with a lockfile: npm ci, its build script, npm start",
			files: Files{PackageJSON: pkg(`"build":"vite build","start":"node server.js"`), PackageLock: nil},
			want:  Plan{Detected: Node, Build: "npm ci && npm run build", Start: "npm start"}},
		{name: "node with a shrinkwrap: npm ci",
			files: Files{PackageJSON: pkg(`"start":"node index.js"`), NpmShrinkwrap: nil},
			want:  Plan{Detected: Node, Build: "npm ci", Start: "npm start"}},
		{name: "node without a lockfile: npm install, no build script",
			files: Files{PackageJSON: pkg(`"start":"node index.js"`)},
			want:  Plan{Detected: Node, Build: "npm install", Start: "npm start"}},
		{name: "node without a start script runs server.js, as npm start would",
			files: Files{PackageJSON: []byte(`{"name":"x"}`), ServerJS: nil},
			want:  Plan{Detected: Node, Build: "npm install", Start: "node server.js"}},
		{name: "node without any start is refused, naming what to add",
			files:   Files{PackageJSON: pkg(`"build":"tsc"`)},
			wantErr: "package.json has no start script and there is no server.js: say how to start"},
		{name: "node without a start script, started by the Procfile",
			files: Files{PackageJSON: pkg(`"build":"tsc"`), ProcfileFile: []byte("web: node dist/main.js\nworker: node dist/worker.js\n")},
			want: Plan{Detected: Node, Build: "npm install && npm run build", Start: "node dist/main.js",
				Processes: []revision.Process{proc("web", "node dist/main.js"), proc("worker", "node dist/worker.js")}}},
		{name: "a broken package.json is an error naming the file and the place",
			files:   Files{PackageJSON: []byte("{\n  \"name\": \"x\",\n  \"scripts\": {\"start\": \"node s.js\",}\n}")},
			wantErr: "package.json is not valid JSON: invalid character '}' looking for beginning of object key string (line 3"},
		{name: "a cut-off package.json",
			files:   Files{PackageJSON: []byte(`{"name": "x"`)},
			wantErr: "package.json is not valid JSON: unexpected end of JSON input (line 1, column 12)"},
		{name: "a package.json that is an array",
			files:   Files{PackageJSON: []byte(`["x"]`)},
			wantErr: "package.json is not a JSON object"},
		{name: "package.json scripts of the wrong shape",
			files:   Files{PackageJSON: []byte(`{"scripts":{"start":["node"]}}`)},
			wantErr: "package.json: scripts must be an object of command strings"},
		{name: "a broken package.json is refused even when tori.json gives the commands",
			files:    Files{PackageJSON: []byte(`{`), ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Start: "node s.js", Build: "true"},
			wantErr:  "package.json is not valid JSON"},
		{name: "python: requirements installed with pip, app.py started",
			files: Files{RequirementsTxt: []byte("# web\nflask==3.0.0\n\ngunicorn  # server\n"), AppPy: nil},
			want: Plan{Detected: Python, Build: "python3 -m pip install -r requirements.txt --target .tori/python", Start: "python3 app.py",
				Env: map[string]string{"PYTHONPATH": "/app/.tori/python", "PYTHONUNBUFFERED": "1"}}},
		{name: "python: an empty requirements.txt installs nothing",
			files: Files{RequirementsTxt: []byte("# nothing yet\n\n"), MainPy: nil},
			want:  Plan{Detected: Python, Start: "python3 main.py", Env: map[string]string{"PYTHONUNBUFFERED": "1"}}},
		{name: "python: app.py before main.py",
			files: Files{AppPy: nil, MainPy: nil},
			want:  Plan{Detected: Python, Start: "python3 app.py", Env: map[string]string{"PYTHONUNBUFFERED": "1"}}},
		{name: "python: requirements without an entry point is refused",
			files:   Files{RequirementsTxt: []byte("flask\n")},
			wantErr: "a Python source without app.py or main.py"},
		{name: "python: the Procfile's web line starts it",
			files: Files{RequirementsTxt: []byte("gunicorn\n"), ProcfileFile: []byte("web: python3 -m gunicorn app:app\n")},
			want: Plan{Detected: Python, Build: "python3 -m pip install -r requirements.txt --target .tori/python", Start: "python3 -m gunicorn app:app",
				Env: map[string]string{"PYTHONPATH": "/app/.tori/python", "PYTHONUNBUFFERED": "1"}, Processes: []revision.Process{proc("web", "python3 -m gunicorn app:app")}}},
		{name: "go: built into bin/<module's last element>",
			files: Files{GoMod: []byte("// the service\nmodule example.com/acme/hello-go\n\ngo 1.22\n")},
			want:  Plan{Detected: Go, Build: "go build -o bin/hello-go .", Start: "bin/hello-go"}},
		{name: "go: a major-version suffix is not the name",
			files: Files{GoMod: []byte("module github.com/acme/api/v2\n")},
			want:  Plan{Detected: Go, Build: "go build -o bin/api .", Start: "bin/api"}},
		{name: "go: a module path with shell characters is made a safe name",
			files: Files{GoMod: []byte("module \"x/$(id);y\"\n")},
			want:  Plan{Detected: Go, Build: "go build -o bin/id-y .", Start: "bin/id-y"}},
		{name: "go: without a module line",
			files:   Files{GoMod: []byte("go 1.22\n")},
			wantErr: "go.mod has no module line"},
		{name: "go: the Procfile names the binary",
			files: Files{GoMod: []byte("module example.com/web\n"), ProcfileFile: []byte("web: bin/web -listen :$PORT")},
			want: Plan{Detected: Go, Build: "go build -o bin/web .", Start: "bin/web -listen :$PORT",
				Processes: []revision.Process{proc("web", "bin/web -listen :$PORT")}}},
		{name: "package.json first when several are there",
			files: Files{PackageJSON: pkg(`"start":"node s.js"`), GoMod: []byte("module m\n"), AppPy: nil},
			want:  Plan{Detected: Node, Build: "npm install", Start: "npm start"}},
		{name: "python before go",
			files: Files{GoMod: []byte("module m\n"), MainPy: nil},
			want:  Plan{Detected: Python, Start: "python3 main.py", Env: map[string]string{"PYTHONUNBUFFERED": "1"}}},
		{name: "only a Procfile: run its web line, build nothing",
			files: Files{ProcfileFile: []byte("release: ./migrate\nweb:   ./serve --port $PORT  \n")},
			want: Plan{Detected: Procfile, Start: "./serve --port $PORT", Release: "./migrate",
				Processes: []revision.Process{proc("web", "./serve --port $PORT")}}},
		{name: "a Procfile without a web line and nothing else: a worker alone",
			files: Files{ProcfileFile: []byte("worker: ./work\n")},
			want:  Plan{Detected: Procfile, Processes: []revision.Process{proc("worker", "./work")}}},
		{name: "a Procfile's types, web first then by name, its release line the release Job",
			files: Files{ProcfileFile: []byte("# the app\nworker: ./work --queue q\n\nrelease: ./migrate up\nclock:./tick\n  web: ./serve  \n")},
			want: Plan{Detected: Procfile, Start: "./serve", Release: "./migrate up",
				Processes: []revision.Process{proc("web", "./serve"), proc("clock", "./tick"), proc("worker", "./work --queue q")}}},
		{name: "a Procfile's web and worker beside a detected source: the detected start is not a third",
			files: Files{PackageJSON: pkg(`"start":"node s.js"`), ProcfileFile: []byte("worker: node w.js\n")},
			want:  Plan{Detected: Node, Build: "npm install", Processes: []revision.Process{proc("worker", "node w.js")}}},
		{name: "tori.json's start is web beside the Procfile's worker",
			files:    Files{ProcfileFile: []byte("web: ./old\nworker: ./work\n"), ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Start: "./serve"},
			want:     Plan{Detected: Procfile, Start: "./serve", Processes: []revision.Process{proc("web", "./serve"), proc("worker", "./work")}}},
		{name: "tori.json's processes win over the Procfile's",
			files:    Files{ProcfileFile: []byte("web: ./p\nother: ./o\nrelease: ./pm\n"), ServerJS: nil, ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Processes: []revision.Process{proc("worker", "./w"), proc("web", "./s")}},
			want:     Plan{Detected: Manifest, Start: "./s", Release: "./pm", Processes: []revision.Process{proc("web", "./s"), proc("worker", "./w")}}},
		{name: "tori.json's start and processes without web",
			files:    Files{ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Start: "./s", Processes: []revision.Process{proc("worker", "./w")}},
			want:     Plan{Detected: Manifest, Start: "./s", Processes: []revision.Process{proc("web", "./s"), proc("worker", "./w")}}},
		{name: "tori.json's processes: workers alone, nothing detected to start",
			files:    Files{PackageJSON: pkg(`"build":"tsc"`), ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Processes: []revision.Process{proc("worker", "node dist/w.js")}},
			want:     Plan{Detected: Node, Build: "npm install && npm run build", Processes: []revision.Process{proc("worker", "node dist/w.js")}}},
		{name: "tori.json's release wins over the Procfile's",
			files:    Files{ProcfileFile: []byte("web: ./s\nrelease: ./pm\n"), ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Release: true},
			want:     Plan{Detected: Procfile, Start: "./s", Processes: []revision.Process{proc("web", "./s")}}},
		{name: "a Procfile name outside the rule",
			files:   Files{ProcfileFile: []byte("web: ./s\nWorker_1: ./w\n")},
			wantErr: `Procfile line 2: "Worker_1" is not a valid process name`},
		{name: "a Procfile line without a colon",
			files:   Files{ProcfileFile: []byte("web: ./s\n./w\n")},
			wantErr: `Procfile line 2: want "name: command"`},
		{name: "a Procfile type given twice",
			files:   Files{ProcfileFile: []byte("worker: a\nworker: b\n")},
			wantErr: "Procfile line 2: worker is declared twice"},
		{name: "a Procfile worker without a command",
			files:   Files{ProcfileFile: []byte("web: ./s\nworker:\n")},
			wantErr: "Procfile: the worker: line has no command"},
		{name: "a Procfile of comments only, and nothing else",
			files:   Files{ProcfileFile: []byte("# nothing\n\n")},
			wantErr: "nothing says how to start this service"},
		{name: "an empty web line",
			files:   Files{ProcfileFile: []byte("web:\n")},
			wantErr: "Procfile: the web: line has no command"},
		{name: "tori.json's build and start win over the detected ones",
			files:    Files{PackageJSON: pkg(`"start":"node s.js"`), PackageLock: nil, ManifestFile: nil, ProcfileFile: []byte("web: node p.js")},
			manifest: ManifestCommands{Present: true, Build: "make", Start: "node t.js"},
			want:     Plan{Detected: Node, Build: "make", Start: "node t.js", Processes: []revision.Process{proc("web", "node t.js")}}},
		{name: "tori.json's start alone keeps the detected build",
			files:    Files{PackageJSON: pkg(`"build":"tsc"`), ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Start: "node dist/s.js"},
			want:     Plan{Detected: Node, Build: "npm install && npm run build", Start: "node dist/s.js"}},
		{name: "a tori.json of its own (the CLI's app field only) leaves detection to it",
			files:    Files{GoMod: []byte("module m\n"), ManifestFile: nil},
			manifest: ManifestCommands{Present: true},
			want:     Plan{Detected: Go, Build: "go build -o bin/m .", Start: "bin/m"}},
		{name: "tori.json alone, as before detection",
			files:    Files{ManifestFile: nil, ServerJS: nil},
			manifest: ManifestCommands{Present: true, Build: "echo hi", Start: "node server.js"},
			want:     Plan{Detected: Manifest, Build: "echo hi", Start: "node server.js"}},
		{name: "nothing at all",
			files:   Files{},
			wantErr: "nothing says how to start this service"},
		{name: "a tori.json without start and nothing else",
			files:    Files{ManifestFile: nil},
			manifest: ManifestCommands{Present: true, Build: "make"},
			wantErr:  "nothing says how to start this service"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Detect(c.files, c.manifest)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Detected != c.want.Detected || got.Build != c.want.Build || got.Start != c.want.Start || !maps.Equal(got.Env, c.want.Env) ||
				!slices.Equal(got.Processes, c.want.Processes) || got.Release != c.want.Release {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
			if got.Reason == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

// The reason says what was seen and where each command came from.
func TestReasonNamesTheSourceOfEachCommand(t *testing.T) {
	p, err := Detect(Files{PackageJSON: []byte(`{"scripts":{"build":"b","start":"s"}}`), PackageLock: nil, ProcfileFile: []byte("web: node w.js")},
		ManifestCommands{Present: true, Build: "make"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"package.json with package-lock.json: npm ci", "start from the Procfile's web: line", "build from tori.json"} {
		if !strings.Contains(p.Reason, want) {
			t.Errorf("reason %q lacks %q", p.Reason, want)
		}
	}
}

// What a revision runs: its declarations, or the one web of its start.
func TestProcessList(t *testing.T) {
	p, err := Detect(Files{ProcfileFile: []byte("web: ./s\n")}, ManifestCommands{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.ProcessList(); !slices.Equal(got, []revision.Process{proc("web", "./s")}) {
		t.Fatalf("%v", got)
	}
	p, err = Detect(Files{GoMod: []byte("module m\n")}, ManifestCommands{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Processes) != 0 || !slices.Equal(p.ProcessList(), []revision.Process{proc("web", "bin/m")}) {
		t.Fatalf("none declared: %v / %v", p.Processes, p.ProcessList())
	}
}

func proc(name, command string) revision.Process {
	return revision.Process{Name: name, Command: command}
}
