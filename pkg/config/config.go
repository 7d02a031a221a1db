// Package config loads one service's configuration struct from environment variables.
//
// Fields use go-envconfig tags (`env:"NAME, default=value"`). A field that holds a secret is
// also tagged `secret:"true"`: Describe never prints its value, so a service can log its
// configuration at start without leaking keys or passwords.
package config

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/sethvargo/go-envconfig"
)

// Validator is implemented by configuration structs that check themselves after loading.
type Validator interface {
	Validate() error
}

// Load fills cfg (a pointer to a struct) from the process environment and validates it.
func Load(ctx context.Context, cfg any) error {
	return LoadFrom(ctx, cfg, envconfig.OsLookuper())
}

// LoadMap fills cfg from the given map instead of the process environment; tests use it.
func LoadMap(ctx context.Context, cfg any, env map[string]string) error {
	return LoadFrom(ctx, cfg, envconfig.MapLookuper(env))
}

// LoadFrom fills cfg from lookuper and validates it.
func LoadFrom(ctx context.Context, cfg any, lookuper envconfig.Lookuper) error {
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: cfg, Lookuper: lookuper}); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if v, ok := cfg.(Validator); ok {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	return nil
}

// Describe renders cfg as "NAME=value" pairs for a start-up log line. Secret fields print as
// "set" or "unset", never their value; URLs have their password removed.
func Describe(cfg any) map[string]string {
	out := map[string]string{}
	describe(reflect.ValueOf(cfg), out)
	return out
}

func describe(v reflect.Value, out map[string]string) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("env")
		name := strings.TrimSpace(strings.Split(tag, ",")[0])
		fv := v.Field(i)
		if name == "" {
			describe(fv, out)
			continue
		}
		if f.Tag.Get("secret") == "true" {
			if fv.IsZero() {
				out[name] = "unset"
			} else {
				out[name] = "set"
			}
			continue
		}
		out[name] = RedactURL(fmt.Sprint(fv.Interface()))
	}
}

// Environ is the process environment as a map, for a composition root that takes its
// environment as an argument (so a test can hand it one of its own).
func Environ() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}
