package usecase

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/buildplan"
	"tori.dev/services/zoneagent/internal/revision"
)

// publishBuild reports the plan in tx: the step with the plan (the deploy's build field) and
// one system line saying what was detected and why.
func (a *Agent) publishBuild(ctx context.Context, tx Tx, r revision.Revision, plan buildplan.Plan) error {
	p := a.progress(r, StepBuildDetected, "", plan.Reason)
	p.Build = &zonev1.BuildPlan{Detected: plan.Detected, Command: plan.Build, Start: plan.Start}
	for _, x := range plan.Processes {
		p.Build.Processes = append(p.Build.Processes, &zonev1.ProcessType{Name: x.Name, Command: x.Command})
	}
	if err := tx.Publish(ctx, zonebus.KeyDeployProgressed, p); err != nil {
		return err
	}
	return tx.Publish(ctx, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: []*logsv1.LogEntry{{
		AppId: r.AppID, DeployId: r.DeployID, Stream: "system", Timestamp: timestamppb.Now(), Message: BuildLine(plan),
	}}})
}

// BuildLine is the system line a customer reads about the plan.
func BuildLine(plan buildplan.Plan) string {
	build := plan.Build
	if build == "" {
		build = "nothing to build"
	}
	line := fmt.Sprintf("%s: %s (%s); build: %s; start: %s", stepLines[StepBuildDetected], plan.Detected, plan.Reason, build, plan.Start)
	if plan.Start == "" {
		line += "nothing (no web process)"
	}
	for _, p := range plan.Processes {
		if p.Name != revision.Web {
			line += "; " + p.Name + ": " + p.Command
		}
	}
	return line
}
