package usecase_test

import (
	"context"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// The in-memory store keeps no formation: the use cases tested over it never scale, and a
// service's activation sees an app with none yet (web at 1). The formation's rules are tested
// in internal/deploy and over Postgres in internal/httpapi.

func (m *memory) SaveDeclarations(context.Context, string, []deploy.Process) error { return nil }
func (m *memory) CopyDeclarations(context.Context, string, string) error           { return nil }
func (m *memory) Declarations(context.Context, string) ([]deploy.Process, error)   { return nil, nil }
func (m *memory) LockFormation(context.Context, string) (usecase.FormationState, []deploy.FormationEntry, error) {
	return usecase.FormationState{}, nil, nil
}
func (m *memory) SaveFormation(context.Context, string, usecase.FormationState, []deploy.FormationEntry) error {
	return nil
}
func (m *memory) Formation(context.Context, string) ([]deploy.FormationEntry, error) { return nil, nil }
