package usecase

import (
	"context"
	"time"

	"tori.dev/services/zoneagent/internal/revision"
)

// The control plane's commands and the apps' events are recorded in the consumer's
// transaction (tx) and acted on by the worker outside it: a command is never lost to a
// crash, and the slow part holds no delivery. The consumer pokes the worker once that
// transaction commits (Poke), so the worker's pass finds what was recorded.

// StartRevision records a revision to prepare; a redelivery changes nothing, and one for a
// deleted app is dropped.
func (a *Agent) StartRevision(ctx context.Context, tx Tx, r revision.Revision) error {
	rememberTrace(ctx, r.DeployID) // traces.go
	added, err := tx.AddRevision(ctx, r)
	if err != nil || !added || r.PreviewID == "" {
		return err
	}
	return a.refuseRemovedPreview(ctx, tx, r) // previews.go
}

// ActivateRevision records that the control plane wants the revision live, running
// formation f.
func (a *Agent) ActivateRevision(ctx context.Context, tx Tx, appID, deployID string, f revision.Formation) error {
	if _, err := tx.SetFormation(ctx, appID, deployID, f); err != nil {
		return err
	}
	return tx.Want(ctx, deployID, true)
}

// DiscardRevision records that the control plane gave the revision up.
func (a *Agent) DiscardRevision(ctx context.Context, tx Tx, deployID string) error {
	return tx.Want(ctx, deployID, false)
}

// DomainActivated adds an app's custom hostname; the edge follows within one pass of the
// commit (routing.go), reading that hostname alone.
func (a *Agent) DomainActivated(ctx context.Context, tx Tx, hostname, appID string, at time.Time) error {
	a.routeChanged(tx, hostKey(hostname))
	return tx.SetDomain(ctx, hostname, appID, at)
}

// DomainRemoved removes an app's custom hostname.
func (a *Agent) DomainRemoved(ctx context.Context, tx Tx, hostname, appID string, at time.Time) error {
	a.routeChanged(tx, hostKey(hostname))
	return tx.RemoveDomain(ctx, hostname, appID, at)
}

// DomainDeactivated stops serving a hostname whose TXT record went missing: apps keeps the
// claim (pending again), but until it is verified anew the edge must not route it.
func (a *Agent) DomainDeactivated(ctx context.Context, tx Tx, hostname, appID string, at time.Time) error {
	a.routeChanged(tx, hostKey(hostname))
	return tx.RemoveDomain(ctx, hostname, appID, at)
}

// NoteAccount records whose app it is, from the deploy command, so a hold on the account
// reaches it (the edge reads the app's hold once this commits).
func (a *Agent) NoteAccount(ctx context.Context, tx Tx, appID, accountID string) error {
	a.routeChanged(tx, routeChange{kind: appAccountSet, key: appID})
	return tx.SetAppAccount(ctx, appID, accountID)
}

// HoldChanged keeps billing's latest word on an account's payment-failure hold: from
// stopsFrom every app of the account answers with the paused page (nil lifts it). The edge
// follows within one pass of the commit, reading that account's apps alone.
func (a *Agent) HoldChanged(ctx context.Context, tx Tx, accountID string, stopsFrom *time.Time, version int64) error {
	a.routeChanged(tx, routeChange{kind: accountHoldSet, key: accountID})
	return tx.SaveHold(ctx, accountID, stopsFrom, version)
}

// DeleteApp stops serving the app before the record commits: the delete is a fact, and
// stopping twice on a redelivery is harmless.
func (a *Agent) DeleteApp(ctx context.Context, tx Tx, appID string, deletedAt time.Time) error {
	if err := a.ForgetApp(ctx, appID); err != nil {
		return err
	}
	return tx.DeleteApp(ctx, appID, deletedAt)
}
