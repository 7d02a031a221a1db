package httpapi

import (
	"errors"
	"log/slog"
	"math"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/access"
	"tori.dev/contract/names"
	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/httperror"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/audit"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/team"
	"tori.dev/services/identity/internal/usecase"
)

// HeaderCountBucket tells the gateway to count a token request against the caller's
// per-address bucket (docs/conventions.md): identity sets it only when the request named no
// code it knows, so a client polling a real code at its interval is never locked out.
const HeaderCountBucket = "X-Tori-Count-Bucket"

// errInvalidBody: the request body is not the JSON the route reads.
var errInvalidBody = errors.New("httpapi: invalid JSON body")

// mapping is the one place a domain error gets its status and code.
var mapping = []struct {
	err error
	he  *httperror.Error
}{
	{errInvalidBody, httperror.New(http.StatusBadRequest, "invalid_body")},
	{account.ErrInvalidEmail, httperror.New(http.StatusBadRequest, "invalid_email")},
	{account.ErrNotFound, httperror.NotFound},
	{auth.ErrNotFound, httperror.NotFound},
	{auth.ErrUnauthorized, httperror.Unauthorized},
	{auth.ErrInvalidToken, httperror.New(http.StatusBadRequest, "invalid_token")},
	{auth.ErrSessionRequired, httperror.New(http.StatusForbidden, "session_required").
		WithMessage("this operation needs a session token from a console sign-in; an API token cannot mint or approve credentials")},
	{auth.ErrInvalidName, httperror.New(http.StatusBadRequest, "invalid_name").
		WithMessage("name must be 1 to 100 characters")},
	{auth.ErrUnknownCode, httperror.New(http.StatusBadRequest, "invalid_grant")},
	{auth.ErrInvalidGrant, httperror.New(http.StatusBadRequest, "invalid_grant")},
	{auth.ErrInvalidRequest, httperror.New(http.StatusBadRequest, "invalid_request")},
	{auth.ErrAuthorizationPending, httperror.New(http.StatusBadRequest, "authorization_pending")},
	{auth.ErrExpiredToken, httperror.New(http.StatusBadRequest, "expired_token")},
	{auth.ErrAccessDenied, httperror.New(http.StatusBadRequest, "access_denied")},
	{auth.ErrInvalidUserCode, httperror.New(http.StatusBadRequest, "invalid_user_code")},
	{auth.ErrInvalidRedirectURI, httperror.New(http.StatusBadRequest, "invalid_redirect_uri").
		WithMessage("redirectUri must be http://127.0.0.1:<port>/…, http://[::1]:<port>/… or http://localhost:<port>/…")},
	{auth.ErrTokenExpired, httperror.New(http.StatusUnauthorized, "token_expired").
		WithMessage("this token has expired; create a new one")},
	{audit.ErrBeyondRetention, httperror.New(http.StatusGone, "beyond_retention").
		WithMessage("start is older than the team's plan keeps its audit log")},
	{team.ErrNotFound, httperror.NotFound},
	{team.ErrInvalidName, httperror.New(http.StatusBadRequest, "invalid_name").
		WithMessage("name must be 1 to %d characters, none of them control characters", team.MaxNameLen)},
	{team.ErrInvalidSlug, httperror.New(http.StatusBadRequest, "invalid_slug").
		WithMessage("slug must match %s", names.SlugPattern)},
	{team.ErrSlugTaken, httperror.New(http.StatusConflict, "slug_taken").WithMessage("another team has that slug")},
	{team.ErrInvalidRole, httperror.New(http.StatusBadRequest, "invalid_parameter").WithField("role").
		WithMessage("role must be viewer, developer, admin or owner")},
	{team.ErrPersonalTeam, httperror.New(http.StatusConflict, "personal_team").
		WithMessage("a personal team can be neither deleted nor shared")},
	{team.ErrNotEmpty, httperror.New(http.StatusConflict, "team_not_empty").
		WithMessage("the team still owns apps; delete them first")},
	{team.ErrLastOwner, httperror.New(http.StatusConflict, "last_owner").
		WithMessage("a team keeps at least one owner; make another member owner first")},
	{team.ErrAlreadyMember, httperror.New(http.StatusConflict, "already_member")},
	{team.ErrInvalidInvitation, httperror.New(http.StatusBadRequest, "invalid_token")},
	{team.ErrInvitationExpired, httperror.New(http.StatusGone, "invitation_expired")},
	{team.ErrEmailMismatch, httperror.New(http.StatusForbidden, "invitation_email_mismatch").
		WithMessage("the invitation was sent to another address; sign in with that one")},
	{usecase.ErrMailUnavailable, httperror.New(http.StatusServiceUnavailable, "mail_unavailable")},
	{usecase.ErrPlanUnavailable, httperror.New(http.StatusServiceUnavailable, "service_unavailable")},
}

// toHTTP translates a domain error, or returns nil for anything else.
func toHTTP(err error) *httperror.Error {
	var slow *auth.SlowDownError
	if errors.As(err, &slow) {
		secs := int(math.Ceil(slow.RetryAfter.Seconds()))
		return httperror.New(http.StatusTooManyRequests, "slow_down").WithRetryAfter(secs)
	}
	var param *auth.ParameterError
	if errors.As(err, &param) {
		return httperror.New(http.StatusBadRequest, "invalid_parameter").WithField(param.Field).
			WithMessage("%s %s", param.Field, param.Reason)
	}
	var scope *auth.ScopeError
	if errors.As(err, &scope) {
		he := httperror.New(http.StatusForbidden, "insufficient_scope").
			WithMessage("the token this request came with does not cover that; it takes %s", scope.Required)
		he.Body.RequiredScope = scope.Required
		return he
	}
	var limit *auth.TokenLimitError
	if errors.As(err, &limit) {
		return httperror.New(http.StatusForbidden, "token_limit_reached").
			WithLimit(int64(limit.Limit), limit.Plan).
			WithMessage("An account may hold %d API tokens; revoke one to create another.", limit.Limit)
	}
	var teamLimit *team.LimitError
	if errors.As(err, &teamLimit) {
		he := httperror.New(http.StatusForbidden, teamLimit.Code).WithLimit(teamLimit.Limit, teamLimit.Plan)
		if teamLimit.Code == team.CodeTeamLimit {
			return he.WithMessage("A person may own %d team on %s besides their personal one.", teamLimit.Limit, teamLimit.Plan)
		}
		return he.WithMessage("The team's plan allows %d members, pending invitations included.", teamLimit.Limit)
	}
	for _, m := range mapping {
		if errors.Is(err, m.err) {
			return m.he
		}
	}
	return nil
}

// countedError marks an error the gateway should count in the per-address bucket.
type countedError struct{ error }

func (e countedError) Unwrap() error { return e.error }

// counted marks err for the bucket.
func counted(err error) error { return countedError{err} }

func isCounted(err error) bool {
	var ce countedError
	return errors.As(err, &ce) || errors.Is(err, auth.ErrUnknownCode)
}

// errorHandler writes domain errors by the mapping and leaves the rest to pkg/httperror,
// which logs them and answers a bare 500.
func errorHandler(log *slog.Logger, gate *accessgate.Gate) fiber.ErrorHandler {
	fallback := httperror.Handler(log)
	return func(c *fiber.Ctx, err error) error {
		if isCounted(err) {
			c.Set(HeaderCountBucket, "1")
		}
		// A refusal a use case decided (it needed the target's role) is recorded in the
		// team's audit log like the gate's own.
		var denied *access.Denied
		if errors.As(err, &denied) && gate != nil {
			err = gate.Deny(c, denied)
		}
		if he := toHTTP(err); he != nil {
			return httperror.Write(c, he)
		}
		return fallback(c, err)
	}
}
