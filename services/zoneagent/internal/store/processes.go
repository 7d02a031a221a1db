package store

import (
	"context"
	"encoding/json"
	"fmt"

	"tori.dev/services/zoneagent/internal/revision"
)

// storedProcess is one process type as the revisions.processes column keeps it.
type storedProcess struct {
	Name    string `json:"name"`
	Command string `json:"command"`
}

// processesJSON is the column's value for ps (an empty list, never null).
func processesJSON(ps []revision.Process) ([]byte, error) {
	out := make([]storedProcess, len(ps))
	for i, p := range ps {
		out[i] = storedProcess{Name: p.Name, Command: p.Command}
	}
	return json.Marshal(out)
}

// parseProcesses reads the column back; an empty list is nil.
func parseProcesses(b []byte) ([]revision.Process, error) {
	var in []storedProcess
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("store: processes: %w", err)
	}
	var out []revision.Process
	for _, p := range in {
		out = append(out, revision.Process{Name: p.Name, Command: p.Command})
	}
	return out, nil
}

// SetProcesses records the process types a revision runs, once they are known (a source's
// after its tree is planned).
func (t Tx) SetProcesses(ctx context.Context, deployID string, ps []revision.Process) error {
	b, err := processesJSON(ps)
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx, `UPDATE revisions SET processes = $2, updated_at = now() WHERE deploy_id = $1`, deployID, b)
	return err
}
