package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"tori.dev/contract/names"
	"tori.dev/pkg/httperror"
	"tori.dev/services/apps/internal/accounts"
	"tori.dev/services/apps/internal/apps"
	"tori.dev/services/apps/internal/domains"
	"tori.dev/services/apps/internal/env"
)

var (
	// errInvalidJSON: a body that is not a JSON object where one is required.
	errInvalidJSON = errors.New("httpapi: invalid json")
	// errInvalidTeam: a `team` that is not a slug, or names another team than the query.
	errInvalidTeam = errors.New("httpapi: invalid team")
	// errNoSuchTeam: a team the caller is not a member of, answered as one that does not
	// exist.
	errNoSuchTeam = errors.New("httpapi: no such team")
)

// toHTTP is the one place a domain error becomes an HTTP status and body. Errors it does not
// know stay as they are; httperror.Handler answers them with a bare 500 and logs the detail.
func toHTTP(err error) error {
	var limit *accounts.LimitError
	switch {
	case errors.As(err, &limit) && errors.Is(err, apps.ErrAppLimit):
		// The contract gives this `error` a human sentence; `code` carries the machine word.
		e := httperror.New(http.StatusForbidden, "app_limit_reached").WithLimit(limit.Limit, limit.Plan)
		e.Body.Error = appLimitSentence(limit)
		return e
	case errors.As(err, &limit) && errors.Is(err, env.ErrVarLimit):
		return httperror.New(http.StatusForbidden, "env_limit_reached").
			WithLimit(limit.Limit, limit.Plan).
			WithMessage("An app may hold %d environment variables; delete one to add another.", limit.Limit)
	case errors.As(err, &limit) && errors.Is(err, domains.ErrDomainLimit):
		return httperror.New(http.StatusForbidden, "domain_limit_reached").
			WithLimit(limit.Limit, limit.Plan).
			WithMessage("The %s plan allows %d custom hostnames per account.", limit.Plan, limit.Limit)

	case errors.Is(err, errInvalidJSON):
		return httperror.New(http.StatusBadRequest, "invalid_json").WithMessage("The body must be a JSON object.")

	case errors.Is(err, errInvalidTeam):
		return httperror.New(http.StatusBadRequest, "invalid_parameter").WithField("team").
			WithMessage("team must be the slug of a team you are a member of, and the same in the query and the body.")
	case errors.Is(err, errNoSuchTeam),
		errors.Is(err, apps.ErrNotFound), errors.Is(err, env.ErrNotSet), errors.Is(err, domains.ErrNotFound):
		return httperror.NotFound
	case errors.Is(err, apps.ErrInvalidSlug):
		return coded(http.StatusBadRequest, "invalid slug", "invalid_slug", "A name must match "+names.SlugPattern+".")
	case errors.Is(err, apps.ErrSlugTaken):
		return coded(http.StatusConflict, "slug taken", "slug_taken", "That name is reserved, in use, or still being released after a delete.")
	case errors.Is(err, apps.ErrInvalidRegion):
		return httperror.New(http.StatusBadRequest, "invalid_region").WithMessage("region must be eu or us.")
	case errors.Is(err, apps.ErrSlugSpaceExhausted):
		return httperror.New(http.StatusServiceUnavailable, "slug_unavailable").WithMessage("No free generated name was found; pass a name.")
	case errors.Is(err, accounts.ErrPlanUnavailable):
		return httperror.New(http.StatusServiceUnavailable, "plan_unavailable").WithMessage("The account's plan could not be read; try again shortly.")

	case errors.Is(err, env.ErrInvalidKey):
		return httperror.New(http.StatusBadRequest, "invalid_env_key").
			WithMessage("key must match %s and be at most %d characters.", names.EnvKeyPattern, env.MaxKeyLength)
	case errors.Is(err, env.ErrInvalidValue):
		return httperror.New(http.StatusBadRequest, "invalid_env_value").
			WithMessage("value must be a string of at most %d bytes without NUL characters.", env.MaxValueBytes)

	case errors.Is(err, env.ErrInvalidChange):
		return httperror.New(http.StatusBadRequest, "invalid_env_change").
			WithMessage(`The body must be {"set": {KEY: value, …}, "unset": [KEY, …]} naming at least one and at most %d variables on each side, none in both.`, env.MaxChangeKeys)

	case errors.Is(err, domains.ErrInvalidHostname):
		return httperror.New(http.StatusBadRequest, "invalid_hostname").
			WithMessage("hostname must be a lower-case DNS name of two or more labels, not an IP address or wildcard, and not under the apps domain.")
	case errors.Is(err, domains.ErrStaticOnly):
		return httperror.New(http.StatusBadRequest, "static_only").WithMessage("Custom hostnames serve static apps only.")
	case errors.Is(err, domains.ErrHostnameTaken):
		return coded(http.StatusConflict, "hostname taken", "hostname_taken", "Another app serves this hostname.")
	case errors.Is(err, domains.ErrExists):
		return httperror.New(http.StatusConflict, "domain_exists").WithMessage("The app already has this hostname.")
	}
	return err
}

// coded is an error whose `error` is the contract's word and whose `code` is its
// machine-readable twin.
func coded(status int, word, code, message string) *httperror.Error {
	e := httperror.Plain(status, word).WithMessage("%s", message)
	e.Body.Code = code
	return e
}

func appLimitSentence(l *accounts.LimitError) string {
	noun := "apps"
	if l.Limit == 1 {
		noun = "app"
	}
	return fmt.Sprintf("Your %s plan allows %d %s. Delete an app or upgrade your plan to create another.", l.Plan, l.Limit, noun)
}
