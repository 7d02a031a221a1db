package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"tori.dev/services/deploys/internal/deploy"
)

const deployColumns = `id::text, app_id, account_id, kind, status, coalesce(image, ''), release,
	coalesce(rollback_of::text, ''), coalesce(error, ''), coalesce(artifact_key, ''), env_sealed,
	coalesce(env_key_id, ''), coalesce(env_for, ''), created_at, updated_at, finished_at, live_at, activating_at, framework,
	build_detected, coalesce(build_command, ''), coalesce(build_start, ''), processes, coalesce(preview_id, '')`

// deployRow is the table's shape; toDeploy converts it to the domain type.
type deployRow struct {
	ID, AppID, AccountID, Kind, Status, Image string
	Release                                   []string
	RollbackOf, Error, ArtifactKey            string
	EnvSealed                                 []byte
	EnvKeyID, EnvFor                          string
	Framework                                 string
	BuildDetected                             *string
	BuildCommand, BuildStart                  string
	CreatedAt, UpdatedAt                      time.Time
	FinishedAt, LiveAt, ActivatingAt          *time.Time
	Processes                                 []byte
	PreviewID                                 string
}

func scanDeploy(row pgx.Row) (*deploy.Deploy, error) {
	var r deployRow
	err := row.Scan(&r.ID, &r.AppID, &r.AccountID, &r.Kind, &r.Status, &r.Image, &r.Release, &r.RollbackOf,
		&r.Error, &r.ArtifactKey, &r.EnvSealed, &r.EnvKeyID, &r.EnvFor, &r.CreatedAt, &r.UpdatedAt, &r.FinishedAt, &r.LiveAt, &r.ActivatingAt, &r.Framework,
		&r.BuildDetected, &r.BuildCommand, &r.BuildStart, &r.Processes, &r.PreviewID)
	if err != nil {
		return nil, err
	}
	d := r.toDeploy()
	if d.Processes, err = processesFromJSON(r.Processes); err != nil {
		return nil, err
	}
	return d, nil
}

func (r deployRow) toDeploy() *deploy.Deploy {
	var build *deploy.Build
	if r.BuildDetected != nil {
		build = &deploy.Build{Detected: *r.BuildDetected, Command: r.BuildCommand, Start: r.BuildStart}
	}
	return &deploy.Deploy{
		Build: build,
		ID:    r.ID, AppID: r.AppID, AccountID: r.AccountID, Kind: deploy.Kind(r.Kind), Status: deploy.Status(r.Status),
		Image: r.Image, Release: r.Release, RollbackOf: r.RollbackOf, Error: r.Error, ArtifactKey: r.ArtifactKey,
		Env: deploy.Snapshot{Sealed: r.EnvSealed, KeyID: r.EnvKeyID, For: r.EnvFor}, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		FinishedAt: utc(r.FinishedAt), LiveAt: utc(r.LiveAt), ActivatingAt: utc(r.ActivatingAt),
		Framework: deploy.Framework(r.Framework), PreviewID: r.PreviewID,
	}
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func getDeploy(ctx context.Context, q rowQuerier, where string, args ...any) (*deploy.Deploy, error) {
	d, err := scanDeploy(q.QueryRow(ctx, `SELECT `+deployColumns+` FROM deploys `+where, args...))
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return nil, deploy.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: load deploy: %w", err)
	}
	return d, nil
}

func listDeploys(ctx context.Context, q rowQuerier, where string, args ...any) ([]*deploy.Deploy, error) {
	rows, err := q.Query(ctx, `SELECT `+deployColumns+` FROM deploys `+where, args...)
	if err != nil {
		if isInvalidText(err) {
			return nil, deploy.ErrNotFound
		}
		return nil, fmt.Errorf("store: list deploys: %w", err)
	}
	defer rows.Close()
	var out []*deploy.Deploy
	for rows.Next() {
		d, err := scanDeploy(rows)
		if err != nil {
			return nil, fmt.Errorf("store: scan deploy: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		if isInvalidText(err) {
			return nil, deploy.ErrNotFound
		}
		return nil, fmt.Errorf("store: list deploys: %w", err)
	}
	return out, nil
}

// isInvalidText is Postgres refusing a malformed uuid: such an id names no deploy.
func isInvalidText(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22P02"
}
