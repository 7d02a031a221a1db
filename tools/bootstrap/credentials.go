package main

import (
	"errors"
	"fmt"
	"net/url"
	"os"
)

// Where the workloads' credentials come from (BOOTSTRAP_CREDENTIALS).
const (
	credentialsInFiles = "files" // DATA_DIR/secrets/<name>.env, made or kept here (make run)
	credentialsInEnv   = "env"   // the environment, as `bootstrap -offline` wrote them (compose, Kubernetes)
)

// check refuses settings that would make passwords nobody is handed.
func (s settings) check() error {
	switch s.Credentials {
	case credentialsInFiles:
	case credentialsInEnv:
		if s.Offline {
			return errors.New("-offline writes the credentials BOOTSTRAP_CREDENTIALS=env reads: use one or the other")
		}
		// The broker users were in the definitions the broker loaded at boot.
		if s.Broker != "none" {
			return errors.New("BOOTSTRAP_CREDENTIALS=env needs BOOTSTRAP_BROKER=none: the broker loads the offline run's definitions")
		}
		// Every zone agent's variables have the same names: one environment holds one zone's.
		if len(s.ExtraZones) > 0 {
			return errors.New("BOOTSTRAP_CREDENTIALS=env makes one zone's credentials: run it once per zone, without EXTRA_ZONE_IDS")
		}
	default:
		return fmt.Errorf("BOOTSTRAP_CREDENTIALS must be files or env, not %q", s.Credentials)
	}
	if s.Offline && s.Broker != "definitions" {
		return errors.New("-offline needs BOOTSTRAP_BROKER=definitions: it can make broker users only as a file")
	}
	return nil
}

// credentialsOf is what is known of p's credentials before this run: its file at path or,
// with BOOTSTRAP_CREDENTIALS=env, its URLs in the environment. Those are taken out of the
// environment, so the bootstrap treats them as its own (it makes the role with that
// password) instead of as given by someone else (left alone).
func (s settings) credentialsOf(p principal, path string) (map[string]string, error) {
	if s.Credentials != credentialsInEnv {
		return readEnvFile(path)
	}
	out := map[string]string{}
	if p.DB.Schema == "" {
		return out, nil
	}
	vars := map[string]string{p.varPrefix() + "_DATABASE_URL": p.DB.Role}
	if p.Name == "zoneagent" {
		vars[zonePostgresVar] = ""
	}
	for name, role := range vars {
		v := os.Getenv(name)
		u, err := url.Parse(v)
		if v == "" || err != nil || passwordIn(v) == "" || (role != "" && u.User.Username() != role) {
			// Made up here, a password would reach no workload: refuse instead.
			return nil, fmt.Errorf("%s must be set, logging in as %s with a password (bootstrap -offline writes it to %s.env)", name, orAny(role), p.Name)
		}
		out[name] = v
		os.Unsetenv(name)
	}
	return out, nil
}

func orAny(role string) string {
	if role == "" {
		return "its role"
	}
	return role
}
