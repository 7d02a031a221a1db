package names

// The prefixes of bearer tokens (API "Authentication" 2): identity issues them, the gateway
// refuses a bearer token with neither before asking identity, and a client can tell the kinds
// apart.
const (
	// SessionTokenPrefix begins a session token (magic-link and command-line sign-in).
	SessionTokenPrefix = "tok_"
	// APITokenPrefix begins an API token.
	APITokenPrefix = "svc_"
)
