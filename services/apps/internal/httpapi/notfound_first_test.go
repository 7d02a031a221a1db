package httpapi_test

import (
	"net/http"
	"testing"

	"tori.dev/services/apps/internal/apptest"
)

// An unknown, foreign or deleted app is 404 whatever the body says: the contract gives such
// a slug no other answer, and a bad body must not be judged before the app is the caller's.
func TestUnknownOrForeignAppIsNotFoundBeforeTheBodyIsJudged(t *testing.T) {
	t.Parallel()
	s := apptest.New(t, apptest.Options{})
	owner, other := apptest.NewAccount(), apptest.NewAccount()
	slug := s.CreateApp(owner, map[string]any{"name": "nf-first"})["slug"].(string)

	bad := []struct {
		method, path string
		body         any
		ownStatus    int
	}{
		{http.MethodPut, "/env", map[string]any{"key": "lower-case", "value": "v"}, http.StatusBadRequest},
		{http.MethodPut, "/env", map[string]any{"key": "OK"}, http.StatusBadRequest},
		{http.MethodPut, "/env", "{not json", http.StatusBadRequest},
		{http.MethodPost, "/domains", map[string]any{"hostname": "not a host"}, http.StatusBadRequest},
		{http.MethodPost, "/domains", "{not json", http.StatusBadRequest},
	}
	for _, tc := range bad {
		s.Must(tc.ownStatus, owner, tc.method, "/api/apps/"+slug+tc.path, tc.body)
		s.Must(http.StatusNotFound, other, tc.method, "/api/apps/"+slug+tc.path, tc.body)
		s.Must(http.StatusNotFound, owner, tc.method, "/api/apps/no-such-app"+tc.path, tc.body)
	}
	s.Must(http.StatusOK, owner, http.MethodDelete, "/api/apps/"+slug, nil)
	for _, tc := range bad {
		s.Must(http.StatusNotFound, owner, tc.method, "/api/apps/"+slug+tc.path, tc.body)
	}
}
