package httpapi

import (
	"errors"
	"fmt"
	"testing"

	"tori.dev/pkg/httperror"
	"tori.dev/services/databases/internal/database"
)

func TestErrorsMapToTheContract(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{database.ErrNotFound, 404, ""},
		{database.ErrServiceOnly, 400, "service_only"},
		{database.ErrExists, 409, "database_exists"},
		{database.ErrNotReady, 409, "database_not_ready"},
		{database.ErrRestoreExists, 409, "restore_exists"},
		{database.ErrBadDump, 400, "invalid_dump"},
		{fmt.Errorf("x: %w", database.ErrTransition), 409, "invalid_state"},
		{fmt.Errorf("%w: down", database.ErrAppUnavailable), 503, "service_unavailable"},
		{fmt.Errorf("%w: down", database.ErrPlanUnavailable), 503, "service_unavailable"},
		{fmt.Errorf("%w: silent", database.ErrZoneUnavailable), 503, "service_unavailable"},
	} {
		he, ok := httperror.From(toHTTP(tc.err))
		if !ok {
			t.Fatalf("%v: not an HTTP error", tc.err)
		}
		if he.Status != tc.status || he.Body.Code != tc.code {
			t.Errorf("%v → %d %q, want %d %q", tc.err, he.Status, he.Body.Code, tc.status, tc.code)
		}
	}
	other := errors.New("boom")
	if toHTTP(other) != other {
		t.Error("an unknown error must stay itself (a logged 500)")
	}
}
