// Package config keeps the command line's sign-in between runs.
package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultAPIURL is where `make run` serves the API.
const DefaultAPIURL = "http://127.0.0.1:8080"

// File is config.json. The token is a secret, so the file is only ever the owner's (0600).
type File struct {
	Token   string `json:"token,omitempty"`
	TokenID string `json:"tokenId,omitempty"`
	APIURL  string `json:"apiUrl,omitempty"`
}

// Path is $XDG_CONFIG_HOME/tori/config.json, with XDG's fallback of ~/.config.
func Path(getenv func(string) string) (string, error) {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home := getenv("HOME")
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("no XDG_CONFIG_HOME and no home folder: %v", err)
			}
			home = h
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "tori", "config.json"), nil
}

// Load reads the file; a missing file is an empty one.
func Load(path string) (File, error) {
	var f File
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("%s is not valid JSON: %v", path, err)
	}
	return f, nil
}

// Save writes the file atomically with mode 0600, whatever the umask or an older file's mode.
func Save(path string, f File) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Settings is what one run uses: the file, overridden by the environment.
type Settings struct {
	File
	Path string
	// TokenFromEnv: TORI_TOKEN is set, so logout must not touch the file's sign-in.
	TokenFromEnv bool
}

// Resolve reads the file at path and applies TORI_TOKEN and TORI_API_URL over it.
func Resolve(getenv func(string) string) (Settings, error) {
	path, err := Path(getenv)
	if err != nil {
		return Settings{}, err
	}
	f, err := Load(path)
	if err != nil {
		return Settings{}, err
	}
	s := Settings{File: f, Path: path}
	if v := getenv("TORI_API_URL"); v != "" {
		s.APIURL = v
	}
	if s.APIURL == "" {
		s.APIURL = DefaultAPIURL
	}
	s.APIURL = strings.TrimRight(s.APIURL, "/")
	if v := getenv("TORI_TOKEN"); v != "" {
		s.Token, s.TokenID, s.TokenFromEnv = v, "", true
	}
	return s, nil
}
