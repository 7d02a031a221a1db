package usecase

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	logsv1 "tori.dev/proto/gen/tori/logs/v1"
	zonev1 "tori.dev/proto/gen/tori/zone/v1"
	zonebus "tori.dev/proto/tori/zone/v1"
	"tori.dev/services/zoneagent/internal/revision"
)

// Step is a reported step of a revision.
type Step = zonev1.DeployStep

// Steps, named for readability at call sites.
const (
	StepBuildStarted     = zonev1.DeployStep_DEPLOY_STEP_BUILD_STARTED
	StepReleaseStarted   = zonev1.DeployStep_DEPLOY_STEP_RELEASE_STARTED
	StepReleaseSucceeded = zonev1.DeployStep_DEPLOY_STEP_RELEASE_SUCCEEDED
	StepReady            = zonev1.DeployStep_DEPLOY_STEP_READY
	StepFailed           = zonev1.DeployStep_DEPLOY_STEP_FAILED
	StepActivated        = zonev1.DeployStep_DEPLOY_STEP_ACTIVATED
	StepDiscarded        = zonev1.DeployStep_DEPLOY_STEP_DISCARDED
	StepBuildDetected    = zonev1.DeployStep_DEPLOY_STEP_BUILD_DETECTED
)

// stepLines are the system log lines a customer reads for each step (in their logs, the
// console and `tori deploy`), instead of the enum's name.
var stepLines = map[Step]string{
	StepBuildStarted:     "Build started",
	StepReleaseStarted:   "Release command started",
	StepReleaseSucceeded: "Release command succeeded",
	StepReady:            "Revision ready",
	StepFailed:           "Deploy failed",
	StepActivated:        "Live: the edge serves this revision",
	StepDiscarded:        "Revision discarded",
	StepBuildDetected:    "Build detected", // with the plan: BuildLine
}

// progress builds a report; code is the failure's machine code.
func (a *Agent) progress(r revision.Revision, step Step, code, message string) *zonev1.DeployProgress {
	return &zonev1.DeployProgress{
		DeployId: r.DeployID, AppId: r.AppID, Zone: a.zone, Step: step, Error: code, Message: message,
		At: timestamppb.New(time.Now()),
	}
}

// publishStep writes a report and a matching system log line in tx.
func (a *Agent) publishStep(ctx context.Context, tx Tx, r revision.Revision, step Step, code, message string) error {
	return a.publishProgress(ctx, tx, r, a.progress(r, step, code, message))
}

// publishReady reports a revision ready with the process types it runs, as its record has
// them (an image's from its start command, a source's from its plan), web first; one that
// declares none runs one web (an image's own command: ""). The record keeps that list.
func (a *Agent) publishReady(ctx context.Context, tx Tx, r revision.Revision) error {
	cur, err := tx.Revision(ctx, r.DeployID)
	if err != nil {
		return err
	}
	processes := revision.ProcessesOrWeb(cur.Processes, "")
	if err := tx.SetProcesses(ctx, r.DeployID, processes); err != nil {
		return err
	}
	p := a.progress(r, StepReady, "", "")
	for _, x := range processes {
		p.Processes = append(p.Processes, &zonev1.ProcessType{Name: x.Name, Command: x.Command})
	}
	return a.publishProgress(ctx, tx, r, p)
}

// publishProgress writes p and the system log line of its step in tx.
func (a *Agent) publishProgress(ctx context.Context, tx Tx, r revision.Revision, p *zonev1.DeployProgress) error {
	step, message := p.GetStep(), p.GetMessage()
	if err := tx.Publish(ctx, zonebus.KeyDeployProgressed, p); err != nil {
		return err
	}
	line := stepLines[step]
	if line == "" {
		line = step.String()
	}
	if message != "" {
		line += ": " + message
	}
	return tx.Publish(ctx, zonebus.KeyLogBatch, &logsv1.LogBatch{Entries: []*logsv1.LogEntry{{
		AppId: r.AppID, DeployId: r.DeployID, Stream: "system", Timestamp: timestamppb.Now(), Message: line,
	}}})
}

// report publishes one step in a transaction of its own.
func (a *Agent) report(ctx context.Context, r revision.Revision, step Step, code, message string) error {
	return a.store.InTx(ctx, func(tx Tx) error { return a.publishStep(ctx, tx, r, step, code, message) })
}
