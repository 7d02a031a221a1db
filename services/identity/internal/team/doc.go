// Package team is the identity service's teams domain: a team and its slug, the memberships
// that give people roles in it, the invitations that bring new members in, and the rules of
// who may change or remove whom. It does no I/O; internal/usecase loads and saves these
// values.
package team
