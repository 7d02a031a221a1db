package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"tori.dev/pkg/callerid"
)

// Introspection is identity's answer for a valid token.
type Introspection struct {
	AccountID string     `json:"accountId"`
	UserID    string     `json:"userId"`
	TokenKind string     `json:"tokenKind"`
	TokenID   string     `json:"tokenId"`
	ExpiresAt *time.Time `json:"expiresAt"` // nil for API tokens
}

// Caller is the identity the gateway signs onto forwarded requests.
func (in Introspection) Caller() callerid.Caller {
	return callerid.Caller{AccountID: in.AccountID, UserID: in.UserID, TokenKind: in.TokenKind, TokenID: in.TokenID}
}

// Principal is who a valid token belongs to, and until when it is valid.
func (in Introspection) Principal() Principal {
	p := Principal{Caller: in.Caller()}
	if in.ExpiresAt != nil {
		p.Expires = *in.ExpiresAt
	}
	return p
}

// Principal is an authenticated caller and its token's end: what the gateway signs onto
// forwarded requests, and when an answer that lasts (a log stream) must end.
type Principal struct {
	callerid.Caller
	Expires time.Time // zero for tokens that do not expire (API tokens)
}

// Introspector checks a token with its owner. It returns ErrUnauthorized for a token that is
// not valid and ErrUnavailable (wrapped) when it cannot tell.
type Introspector interface {
	Introspect(ctx context.Context, token string) (Introspection, error)
}

// TokenUnknownHeader is set by identity on introspection's 401 when the token itself is not
// valid; a 401 without it is a refused signature (docs/conventions.md).
const TokenUnknownHeader = "X-Tori-Token-Unknown"

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
		return Introspection{}, ErrUnauthorized
	default:
		return Introspection{}, fmt.Errorf("%w: identity answered %d", ErrUnavailable, resp.StatusCode)
	}
	var in Introspection
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&in); err != nil {
		return Introspection{}, fmt.Errorf("%w: decode introspection: %v", ErrUnavailable, err)
	}
	if in.AccountID == "" || in.TokenID == "" {
		return Introspection{}, fmt.Errorf("%w: introspection without account or token id", ErrUnavailable)
	}
	return in, nil
}
