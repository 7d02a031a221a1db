package usecase

import (
	"strings"
	"testing"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// Every step a zone reports reads as words in the customer's logs, not as the enum's name.
func TestEveryStepHasALogLine(t *testing.T) {
	for n := range zonev1.DeployStep_name {
		step := zonev1.DeployStep(n)
		if step == zonev1.DeployStep_DEPLOY_STEP_UNSPECIFIED {
			continue
		}
		line := stepLines[step]
		if line == "" || strings.Contains(line, "DEPLOY_STEP") {
			t.Errorf("%s has no log line", step)
		}
	}
}

// The build's system line says what was detected, why, and both commands.
func TestBuildLineSaysWhatWasDetectedAndWhy(t *testing.T) {
	got := BuildLine(buildplan.Plan{Detected: "node", Reason: "package.json with package-lock.json: npm ci", Build: "npm ci", Start: "npm start"})
	if want := "Build detected: node (package.json with package-lock.json: npm ci); build: npm ci; start: npm start"; got != want {
		t.Fatalf("%q", got)
	}
	if got := BuildLine(buildplan.Plan{Detected: "procfile", Reason: "start from the Procfile's web: line", Start: "./serve"}); !strings.Contains(got, "build: nothing to build; start: ./serve") {
		t.Fatalf("%q", got)
	}
	// Each other declared type's command follows web's; a tree declaring workers alone says
	// it runs no web.
	two := BuildLine(buildplan.Plan{Detected: "procfile", Reason: "r", Start: "./serve",
		Processes: []revision.Process{{Name: "web", Command: "./serve"}, {Name: "worker", Command: "./work"}}})
	if !strings.HasSuffix(two, "start: ./serve; worker: ./work") {
		t.Fatalf("%q", two)
	}
	alone := BuildLine(buildplan.Plan{Detected: "procfile", Reason: "r", Processes: []revision.Process{{Name: "worker", Command: "./work"}}})
	if !strings.HasSuffix(alone, "start: nothing (no web process); worker: ./work") {
		t.Fatalf("%q", alone)
	}
}
