package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// readEnvFile reads KEY=value lines; a missing file is empty.
func readEnvFile(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = strings.Trim(v, "'")
		}
	}
	return out, sc.Err()
}

// writeEnvFile writes vars as KEY='value' lines (for a shell, compose's env_file and
// systemd alike), readable by the owner only, through a
// temporary file so a reader never sees half of it.
func writeEnvFile(path string, vars map[string]string) error {
	keys := make([]string, 0, len(vars))
	for k := range vars {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Written by bin/bootstrap: this workload's own credentials. Keep it private.\n")
	for _, k := range keys {
		// Quoted: a URL's query has '&', which a shell sourcing the file would act on. The
		// values never hold a quote (generated passwords are hex, URLs are escaped).
		fmt.Fprintf(&b, "%s='%s'\n", k, vars[k])
	}
	if old, err := os.ReadFile(path); err == nil && string(old) == b.String() {
		return os.Chmod(path, 0o600)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".env-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
