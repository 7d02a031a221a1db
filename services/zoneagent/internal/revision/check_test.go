package revision

import (
	"errors"
	"testing"
)

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8d9e":  true,
		"0192F5A4-7C1E-7D3A-9B2E-4F5A6B7C8D9E":  true,
		"":                                      false,
		"../../../../etc/passwd":                false,
		"0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8d9":   false,
		"0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8d9e/": false,
		"0192f5a47c1e7d3a9b2e4f5a6b7c8d9e0000":  false,
		"0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8d.e":  false,
		"0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8dge":  false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestCheckRefusesUntrustworthyRevisions(t *testing.T) {
	const id = "0192f5a4-7c1e-7d3a-9b2e-4f5a6b7c8d9e"
	good := Revision{DeployID: id, AppID: id, Kind: KindSource}
	cases := map[string]func(r *Revision){
		"a path as the deploy id":  func(r *Revision) { r.DeployID = "../../x" },
		"no app id":                func(r *Revision) { r.AppID = "" },
		"a path as the env deploy": func(r *Revision) { r.EnvDeployID = "/etc" },
		"an unknown kind":          func(r *Revision) { r.Kind = "vm" },
	}
	if err := good.Check(); err != nil {
		t.Fatalf("a good revision: %v", err)
	}
	for name, spoil := range cases {
		r := good
		spoil(&r)
		if err := r.Check(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
