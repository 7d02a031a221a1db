package imageruntime

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// CheckEnvFile tells whether vars can travel in a docker env-file: one KEY=VALUE a line,
// without quoting, so neither a name nor a value may hold a newline and a name no '='.
// The error names the variable, never its value.
func CheckEnvFile(vars map[string]string) error {
	for k, v := range vars {
		if k == "" || strings.ContainsAny(k, "=\n\r\x00") || strings.HasPrefix(strings.TrimSpace(k), "#") || strings.TrimSpace(k) != k {
			return fmt.Errorf("the environment variable %q cannot be passed to a container", k)
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return fmt.Errorf("the value of %s holds a line break, which a container env-file cannot carry", k)
		}
	}
	return nil
}

// writeEnvFile writes vars as an env-file, 0600 in a folder of its own (0700), and returns
// its path and the function that deletes it. Only the agent's user can read it while it
// exists, and it exists only while the engine's `run` command reads it.
func writeEnvFile(parent string, vars map[string]string) (string, func(), error) {
	if err := CheckEnvFile(vars); err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp(parent, "tori-env-") // 0700
	if err != nil {
		return "", nil, err
	}
	remove := func() { os.RemoveAll(dir) }
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + vars[k] + "\n")
	}
	path := filepath.Join(dir, "env")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, err = f.WriteString(b.String())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		remove()
		return "", nil, err
	}
	return path, remove, nil
}
