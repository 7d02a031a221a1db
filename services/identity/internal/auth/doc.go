// Package auth is the identity service's credential domain: session tokens, magic-link codes,
// API tokens and the two command-line sign-in grants (RFC 8628 device flow and a loopback
// redirect with PKCE). It does no I/O. Every secret it makes is returned to the caller once,
// in plain text, and otherwise exists only as its SHA-256 hash.
package auth
