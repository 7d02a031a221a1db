package config

import (
	"context"
	"testing"

	pkgconfig "tori.dev/pkg/config"
)

// PREVIEWS_DOMAIN defaults to preview.<APPS_DOMAIN>; it must be a bare domain and not
// APPS_DOMAIN itself, and the console may not live under it.
func TestPreviewsDomain(t *testing.T) {
	var c Config
	if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(map[string]string{"APPS_DOMAIN": "Apps.Example.com"})); err != nil {
		t.Fatal(err)
	}
	if got := c.PreviewsDomainFor(c.AppsDomain); got != "preview.apps.example.com" {
		t.Fatalf("default previews domain %q", got)
	}
	var set Config
	if err := pkgconfig.LoadMap(context.Background(), &set, withCredentials(map[string]string{"PREVIEWS_DOMAIN": "previews.example.net"})); err != nil {
		t.Fatal(err)
	}
	if got := set.PreviewsDomainFor(set.AppsDomain); got != "previews.example.net" {
		t.Fatalf("set previews domain %q", got)
	}
	for _, env := range []map[string]string{
		{"PREVIEWS_DOMAIN": "apps.localhost"},
		{"APPS_DOMAIN": "apps.example.com", "PREVIEWS_DOMAIN": "APPS.example.com"},
		{"PREVIEWS_DOMAIN": "https://preview.example.com"},
		{"PREVIEWS_DOMAIN": "preview.example.com:443"},
		{"PREVIEWS_DOMAIN": "*.preview.example.com"},
		{"PREVIEWS_DOMAIN": "preview.example.com."},
		{"PREVIEWS_DOMAIN": "preview..example.com"},
		{"PREVIEWS_DOMAIN": "-preview.example.com"},
		{"PREVIEWS_DOMAIN": "preview.example.com/x"},
		{"CONSOLE_URL": "https://console.preview.apps.localhost"},
	} {
		var c Config
		if err := pkgconfig.LoadMap(context.Background(), &c, withCredentials(env)); err == nil {
			t.Errorf("%v accepted", env)
		}
	}
	// The edge process reads the same setting (its environment is EdgeProcess's settings).
	if _, ok := pkgconfig.Describe(&EdgeProcess{})["PREVIEWS_DOMAIN"]; !ok {
		t.Fatal("PREVIEWS_DOMAIN is not among the edge process's settings")
	}
	edgeEnv := withCredentials(map[string]string{"PREVIEWS_DOMAIN": "apps.localhost", "ZONEAGENT_DATABASE_URL": "postgres://z@h/db"})
	var e EdgeProcess
	if err := pkgconfig.LoadMap(context.Background(), &e, edgeEnv); err == nil {
		t.Error("the edge process accepted PREVIEWS_DOMAIN = APPS_DOMAIN")
	}
}
