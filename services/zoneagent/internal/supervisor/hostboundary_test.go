package supervisor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// markSource is a customer's shared object: loaded by any program (LD_PRELOAD, LD_AUDIT,
// a library on LD_LIBRARY_PATH, a gconv module), its constructor appends a line naming the
// program to MARK in /tmp. The sandbox's /tmp is private: the mark showing up in the host's
// /tmp means the object ran outside the sandbox.
const markSource = `
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
	char exe[256] = {0}, line[320];
	if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) strcpy(exe, "?");
	int fd = open(MARK, O_WRONLY | O_CREAT | O_APPEND, 0666);
	if (fd >= 0) { int n = snprintf(line, sizeof line, "ctor %s\n", exe); write(fd, line, n); close(fd); }
}
unsigned int la_version(unsigned int v) { return v; }
`

// shipMarkApp writes into dir what a hostile app ships: libmark.so built with gcc (and as
// lib/libc.so.6 and a gconv module), bin/ with scripts named like the host's tools, and
// shell and Python start-up files, each leaving the mark when run.
func shipMarkApp(t *testing.T, dir, mark string) {
	t.Helper()
	src := filepath.Join(t.TempDir(), "mark.c")
	if err := os.WriteFile(src, []byte(markSource), 0o644); err != nil {
		t.Fatal(err)
	}
	so := filepath.Join(dir, "libmark.so")
	if out, err := exec.Command("gcc", "-shared", "-fPIC", "-O1", "-o", so, "-DMARK=\""+mark+"\"", src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, d := range []string{"bin", "gconv"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	script := "#!/bin/sh\necho \"script $0\" >> " + mark + "\n"
	files := map[string]string{
		"gconv/gconv-modules": "module INTERNAL MARK// libmark 1\nmodule MARK// INTERNAL libmark 1\n",
		"bashenv.sh":          "echo \"bash_env $0\" >> " + mark + "\n",
		"startup.py":          "open(" + strconv.Quote(mark) + ", 'a').write('pythonstartup\\n')\n",
	}
	for _, tool := range []string{"nsenter", "bwrap", "pasta", "nft", "mount", "mkfs.ext4", "prlimit", "sh", "env", "sleep"} {
		files["bin/"+tool] = script
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(so); err == nil {
		os.WriteFile(filepath.Join(dir, "gconv", "libmark.so"), b, 0o755)
	}
}

// markEnv points every variable a host program would act on at the app's files, by the
// path inside the sandbox and by the host path of its tree (what an app once read from
// /proc/1/cmdline).
func markEnv(hostDir string) map[string]string {
	both := func(rel, sep string) string {
		return filepath.Join(sandbox.AppRoot, rel) + sep + filepath.Join(hostDir, rel)
	}
	return map[string]string{
		"LD_PRELOAD":      both("libmark.so", " "),
		"LD_AUDIT":        both("libmark.so", ":"),
		"LD_LIBRARY_PATH": both("", ":"),
		"GCONV_PATH":      both("gconv", ":"),
		"PATH":            both("bin", ":") + ":/usr/local/bin:/usr/bin:/bin",
		"BASH_ENV":        filepath.Join(hostDir, "bashenv.sh"),
		"ENV":             filepath.Join(hostDir, "bashenv.sh"),
		"PYTHONSTARTUP":   filepath.Join(hostDir, "startup.py"),
	}
}

// An app's LD_PRELOAD and the other variables that make a program run someone's code act
// inside its sandbox (the constructor runs there), and nothing of them runs on the host:
// not nsenter, not bubblewrap, not pasta. The sandbox cannot read its tree's host path from
// bubblewrap's command line either.
func TestAppVariablesActOnlyInsideTheSandbox(t *testing.T) {
	r := newRig(t)
	app := uuid.NewString()
	ctx := context.Background()
	if err := r.l.Identities.Ensure(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.l.Source.Sandbox.ReleaseNetwork(app); r.l.Source.Sandbox.Cgroups.Remove(app) })
	// On the app's own disk, as every tree is.
	if err := r.l.Identities.Disk(app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.l.Identities.Disks.Release(app, filepath.Join(r.l.Identities.AppsDir, app)) })
	dir := r.l.Identities.Tree(app, uuid.NewString())
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := "/tmp/tori-escape-mark-" + uuid.NewString()
	t.Cleanup(func() { os.Remove(mark) })
	shipMarkApp(t, dir, mark)
	cred := r.l.Source.Sandbox.Credential(app)
	os.Chown(filepath.Dir(dir), int(cred.Uid), int(cred.Gid))
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, int(cred.Uid), int(cred.Gid)) })

	script := `cat ` + mark + `; echo "cmdline: $(tr '\0' ' ' < /proc/1/cmdline)"; echo "preload: $LD_PRELOAD"; echo "mounts: $(tr '\n' ' ' < /proc/self/mountinfo)"`
	var out strings.Builder
	sb, err := r.l.Source.Sandbox.Start(ctx, sandbox.Spec{AppID: app, Dir: dir, Argv: []string{"/usr/bin/python3", "-c",
		"import subprocess; print(subprocess.run(['/bin/sh', '-c', " + strconv.Quote(script) + "], capture_output=True, text=True).stdout)"},
		Env: sandbox.Environ(markEnv(dir), 0), Stdout: &out, Stderr: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	got := out.String()
	if b, err := os.ReadFile(mark); err == nil {
		t.Fatalf("the app's object ran on the host:\n%s", b)
	}
	if !strings.Contains(got, "ctor /usr/bin/python3") || !strings.Contains(got, "preload: /app/libmark.so") {
		t.Fatalf("LD_PRELOAD did not take effect inside the sandbox:\n%s", got)
	}
	// The loader names the host paths the variables hold (they are the app's own); what
	// the sandbox shows it must not.
	for _, line := range strings.Split(got, "\n") {
		if (strings.HasPrefix(line, "cmdline: ") || strings.HasPrefix(line, "mounts: ")) && strings.Contains(line, r.l.Identities.AppsDir) {
			t.Fatalf("the sandbox can read its tree's host path:\n%s", line)
		}
	}

	// The sandbox's first process's memory is readable to a process of the same uid:
	// bubblewrap's own init held its arguments and the host's mount table there. (Without
	// the variables above, which hold the host path themselves.)
	memory := `
needle = ` + strconv.Quote(reverse(r.l.Identities.AppsDir)) + `[::-1].encode()  # not in this command line as it is
found = []
with open("/proc/1/mem", "rb") as mem:
    for line in open("/proc/1/maps").read().splitlines():
        lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
        try:
            mem.seek(lo); data = mem.read(hi - lo)
        except (OSError, ValueError, OverflowError):
            continue
        if needle in data:
            found.append(line)
print("pid1mem:", found)
`
	out.Reset()
	if sb, err = r.l.Source.Sandbox.Start(ctx, sandbox.Spec{AppID: app, Dir: dir, Argv: []string{"/usr/bin/python3", "-c", memory}, Env: sandbox.Environ(nil, 0), Stdout: &out, Stderr: &out}); err != nil {
		t.Fatal(err)
	}
	if err := sb.Wait(); err != nil || !strings.Contains(out.String(), "pid1mem: []") {
		t.Fatalf("the sandbox's first process holds its tree's host path in its memory (%v):\n%s", err, out.String())
	}
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}
