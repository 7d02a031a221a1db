package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// processRow is a declared process in the deploys.processes column's JSON.
type processRow struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// processesJSON is the column value of an image deploy's declared processes; nil (SQL null)
// for none.
func processesJSON(ps []deploy.Process) []byte {
	if len(ps) == 0 {
		return nil
	}
	rows := make([]processRow, 0, len(ps))
	for _, p := range ps {
		rows = append(rows, processRow(p))
	}
	b, _ := json.Marshal(rows) // strings only: it cannot fail
	return b
}

func processesFromJSON(b []byte) ([]deploy.Process, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var rows []processRow
	if err := json.Unmarshal(b, &rows); err != nil {
		return nil, fmt.Errorf("store: a deploy's processes: %w", err)
	}
	out := make([]deploy.Process, 0, len(rows))
	for _, r := range rows {
		out = append(out, deploy.Process(r))
	}
	return out, nil
}

// SaveDeclarations replaces the process types the deploy declares.
func (t *txStore) SaveDeclarations(ctx context.Context, deployID string, ps []deploy.Process) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM deploy_processes WHERE deploy_id = $1`, deployID); err != nil {
		return fmt.Errorf("store: replace declarations: %w", err)
	}
	for _, p := range ps {
		if _, err := t.tx.Exec(ctx, `INSERT INTO deploy_processes (deploy_id, type, command) VALUES ($1, $2, $3)`,
			deployID, p.Name, p.Command); err != nil {
			return fmt.Errorf("store: save declaration: %w", err)
		}
	}
	return nil
}

// CopyDeclarations gives deploy `to` the declarations of `from`, keeping any `to` has.
func (t *txStore) CopyDeclarations(ctx context.Context, from, to string) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO deploy_processes (deploy_id, type, command)
		SELECT $2, type, command FROM deploy_processes WHERE deploy_id = $1
		ON CONFLICT (deploy_id, type) DO NOTHING`, from, to)
	if err != nil {
		return fmt.Errorf("store: copy declarations: %w", err)
	}
	return nil
}

// Declarations are the deploy's process types, web first then by name.
func (t *txStore) Declarations(ctx context.Context, deployID string) ([]deploy.Process, error) {
	rows, err := t.tx.Query(ctx, `SELECT type, command FROM deploy_processes WHERE deploy_id = $1`, deployID)
	if err != nil {
		return nil, fmt.Errorf("store: load declarations: %w", err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deploy.Process, error) {
		var p deploy.Process
		err := r.Scan(&p.Name, &p.Command)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: load declarations: %w", err)
	}
	deploy.SortProcesses(ps)
	return ps, nil
}

// LockFormation loads the app's formation under a row lock on its state, which it creates at
// generation 0 the first time.
func (t *txStore) LockFormation(ctx context.Context, appID string) (usecase.FormationState, []deploy.FormationEntry, error) {
	if _, err := t.tx.Exec(ctx, `INSERT INTO formations (app_id) VALUES ($1) ON CONFLICT (app_id) DO NOTHING`, appID); err != nil {
		return usecase.FormationState{}, nil, fmt.Errorf("store: create formation: %w", err)
	}
	var st usecase.FormationState
	var deployID *string
	err := t.tx.QueryRow(ctx, `SELECT deploy_id::text, generation, status_at FROM formations WHERE app_id = $1 FOR UPDATE`, appID).
		Scan(&deployID, &st.Generation, &st.StatusAt)
	if err != nil {
		return usecase.FormationState{}, nil, fmt.Errorf("store: lock formation: %w", err)
	}
	if deployID != nil {
		st.DeployID = *deployID
	}
	st.StatusAt = utc(st.StatusAt)
	f, err := formationOf(ctx, t.tx, appID)
	return st, f, err
}

// SaveFormation replaces the app's formation and its state.
func (t *txStore) SaveFormation(ctx context.Context, appID string, st usecase.FormationState, f []deploy.FormationEntry) error {
	_, err := t.tx.Exec(ctx, `UPDATE formations SET deploy_id = $2, generation = $3, status_at = $4 WHERE app_id = $1`,
		appID, nullable(st.DeployID), st.Generation, st.StatusAt)
	if err != nil {
		return fmt.Errorf("store: save formation state: %w", err)
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM formation_processes WHERE app_id = $1`, appID); err != nil {
		return fmt.Errorf("store: replace formation: %w", err)
	}
	for _, e := range f {
		_, err := t.tx.Exec(ctx, `INSERT INTO formation_processes (app_id, type, command, quantity, running, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, appID, e.Type, e.Command, e.Quantity, e.Running, e.UpdatedAt)
		if err != nil {
			return fmt.Errorf("store: save formation: %w", err)
		}
	}
	return nil
}

// Formation is the app's formation, web first then by type.
func (s *Store) Formation(ctx context.Context, appID string) ([]deploy.FormationEntry, error) {
	return formationOf(ctx, s.pool, appID)
}

func formationOf(ctx context.Context, q rowQuerier, appID string) ([]deploy.FormationEntry, error) {
	rows, err := q.Query(ctx, `SELECT type, command, quantity, running, updated_at FROM formation_processes WHERE app_id = $1`, appID)
	if err != nil {
		return nil, fmt.Errorf("store: load formation: %w", err)
	}
	f, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (deploy.FormationEntry, error) {
		var e deploy.FormationEntry
		var at time.Time
		err := r.Scan(&e.Type, &e.Command, &e.Quantity, &e.Running, &at)
		e.UpdatedAt = at.UTC()
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: load formation: %w", err)
	}
	deploy.SortFormation(f)
	return f, nil
}
