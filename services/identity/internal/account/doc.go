// Package account is the identity service's account domain: an account, the one user who
// signs in to it, its writable settings and the copy of its plan that billing owns. It does no
// I/O; the use cases in internal/usecase load and save these values.
package account
