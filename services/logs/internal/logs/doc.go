// Package logs holds the rules of the logs domain: what an entry is, which query parameters
// a read accepts, how far back an account may read, and the opaque paging cursor. It does no
// I/O.
package logs
