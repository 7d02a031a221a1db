package server

import (
	"context"
	"net/http"
)

type sessionKey struct{}

type sessionRef struct {
	s  Session
	id string
}

// withSession hands the forwarder the session forward found, so it is looked up once.
func withSession(ctx context.Context, s Session, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, sessionRef{s, id})
}

func sessionOf(r *http.Request) (Session, bool) {
	ref, ok := r.Context().Value(sessionKey{}).(sessionRef)
	return ref.s, ok
}

func sessionIDOf(r *http.Request) (string, bool) {
	if r == nil {
		return "", false
	}
	ref, ok := r.Context().Value(sessionKey{}).(sessionRef)
	return ref.id, ok
}
