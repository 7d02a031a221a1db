package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"tori.dev/contract/access"
	"tori.dev/pkg/callerid"
)

// Introspection is identity's answer for a valid token.
type Introspection struct {
	AccountID string     `json:"accountId"`
	UserID    string     `json:"userId"`
	TokenKind string     `json:"tokenKind"`
	TokenID   string     `json:"tokenId"`
	ExpiresAt *time.Time `json:"expiresAt"` // sessions and scoped tokens; nil for full API tokens
	// Teams are the person's memberships with their current roles: every one for a session
	// or a full token, the token's own team for a scoped one. Absent from an identity that
	// predates teams: services then treat the caller as the owner of their personal team.
	Teams []TeamRole `json:"teams"`
	// Scope is a scoped token's ("" for a session or a full token); Apps the slugs a pinned
	// token is limited to (empty: every app of its team).
	Scope string   `json:"scope"`
	Apps  []string `json:"apps"`
}

// TeamRole is one membership as identity names it.
type TeamRole struct {
	ID       string `json:"id"`
	Slug     string `json:"slug"`
	Role     string `json:"role"`
	Personal bool   `json:"personal"`
}

// Caller is the identity the gateway signs onto forwarded requests (ClientIP is the
// request's, set per request, never cached).
func (in Introspection) Caller() callerid.Caller {
	ms := make([]access.Membership, 0, len(in.Teams))
	for _, t := range in.Teams {
		role, _ := access.ParseRole(t.Role) // check refused unknown roles
		ms = append(ms, access.Membership{TeamID: t.ID, Slug: t.Slug, Role: role, Personal: t.Personal})
	}
	return callerid.Caller{
		AccountID: in.AccountID, UserID: in.UserID, TokenKind: in.TokenKind, TokenID: in.TokenID,
		Teams: callerid.EncodeTeams(ms), Scope: in.Scope, Apps: strings.Join(in.Apps, ","),
	}
}

// Principal is who a valid token belongs to, and until when it is valid.
func (in Introspection) Principal() Principal {
	p := Principal{Caller: in.Caller()}
	if in.ExpiresAt != nil {
		p.Expires = *in.ExpiresAt
	}
	return p
}

// check refuses an answer the gateway could not sign faithfully. A membership the services
// would drop as malformed, or a scope they do not know, would change what the caller may do
// (a caller whose every team was dropped would even count as the owner of a personal team),
// so such an answer is identity's fault and the request is unavailable, not forwarded.
func (in Introspection) check() error {
	if in.AccountID == "" || in.TokenID == "" {
		return fmt.Errorf("%w: introspection without account or token id", ErrUnavailable)
	}
	for _, t := range in.Teams {
		if _, ok := access.ParseRole(t.Role); !ok || t.ID == "" || strings.ContainsAny(t.ID+t.Slug, ":;") {
			return fmt.Errorf("%w: introspection with a malformed team", ErrUnavailable)
		}
	}
	if in.Scope != "" {
		if _, ok := access.ParseScope(in.Scope); !ok {
			return fmt.Errorf("%w: introspection with an unknown scope", ErrUnavailable)
		}
		if len(in.Teams) == 0 {
			return fmt.Errorf("%w: scoped token without its team", ErrUnavailable)
		}
	}
	for _, a := range in.Apps {
		if a == "" || strings.Contains(a, ",") {
			return fmt.Errorf("%w: introspection with a malformed app", ErrUnavailable)
		}
	}
	return nil
}

// Principal is an authenticated caller and its token's end: what the gateway signs onto
// forwarded requests, and when an answer that lasts (a log stream) must end.
type Principal struct {
	callerid.Caller
	Expires time.Time // zero for tokens that do not expire (full API tokens)
}

// expiredAt reports whether p's token has reached its end at now.
func (p Principal) expiredAt(now time.Time) bool {
	return !p.Expires.IsZero() && !now.Before(p.Expires)
}

// refusalAtEnd is what a token past its end is answered: an API token (which its holder
// chose to let expire) token_expired, a session the contract's plain unauthorized, as before
// scoped tokens existed.
func refusalAtEnd(tokenKind string) error {
	if tokenKind == callerid.KindAPI {
		return ErrTokenExpired
	}
	return ErrUnauthorized
}

// Introspector checks a token with its owner. It returns ErrUnauthorized for a token that is
// not valid and ErrUnavailable (wrapped) when it cannot tell.
type Introspector interface {
	Introspect(ctx context.Context, token string) (Introspection, error)
}

// TokenUnknownHeader is set by identity on introspection's 401 when the token itself is not
// valid; a 401 without it is a refused signature (docs/conventions.md). TokenExpiredHeader
// joins it for an API token past its end, which the client is told (token_expired).
const (
	TokenUnknownHeader = "X-Tori-Token-Unknown"
	TokenExpiredHeader = "X-Tori-Token-Expired"
)

// IntrospectPath is identity's internal route for token checks.
const IntrospectPath = "/internal/introspect"

// introspectTimeout bounds a check; a request waiting on identity longer than this fails.
const introspectTimeout = 5 * time.Second

// IdentityClient asks identity over HTTP, signed as the gateway with an empty caller.
type IdentityClient struct {
	url string
	key []byte
	rt  http.RoundTripper
}

// NewIdentityClient calls identity at base (scheme://host[:port]) through rt.
func NewIdentityClient(base string, key []byte, rt http.RoundTripper) *IdentityClient {
	return &IdentityClient{url: base + IntrospectPath, key: key, rt: rt}
}

// Introspect implements Introspector.
func (c *IdentityClient) Introspect(ctx context.Context, token string) (Introspection, error) {
	ctx, cancel := context.WithTimeout(ctx, introspectTimeout)
	defer cancel()
	body, err := json.Marshal(struct {
		Token string `json:"token"`
	}{token})
	if err != nil {
		return Introspection{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Introspection{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	callerid.SignBody(c.key, req.Header.Set, callerid.Caller{}, http.MethodPost, req.URL.Host, IntrospectPath, time.Now(), callerid.DigestOf(body))
	otel.GetTextMapPropagator().Inject(ctx, propagation.HeaderCarrier(req.Header))

	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		return Introspection{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // keep the connection reusable
		if resp.Header.Get(TokenUnknownHeader) != "1" {
			// Identity refused the gateway's signature (keys apart, clocks apart, a replay):
			// nothing is known about the token, so it is neither remembered as unknown nor
			// answered 401 to a client that would drop its session.
			return Introspection{}, fmt.Errorf("%w: identity refused the gateway's signature", ErrUnavailable)
		}
		if resp.Header.Get(TokenExpiredHeader) == "1" {
			return Introspection{}, ErrTokenExpired
		}
		return Introspection{}, ErrUnauthorized
	default:
		return Introspection{}, fmt.Errorf("%w: identity answered %d", ErrUnavailable, resp.StatusCode)
	}
	var in Introspection
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&in); err != nil {
		return Introspection{}, fmt.Errorf("%w: decode introspection: %v", ErrUnavailable, err)
	}
	if err := in.check(); err != nil {
		return Introspection{}, err
	}
	return in, nil
}
