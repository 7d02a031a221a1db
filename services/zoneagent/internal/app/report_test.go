package app

import (
	"strings"
	"testing"

	zonev1 "tori.dev/proto/gen/tori/zone/v1"
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
