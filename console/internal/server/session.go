package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// cookieName is the session cookie's name: __Host- (Secure, path /, no Domain) outside
// loopback, where the browser would refuse that prefix over plain http.
func (h *Handler) cookieName() string {
	if h.cfg.SecureCookie {
		return "__Host-tori_console"
	}
	return "tori_console"
}

// session answers the request's live session and its cookie id; err when the store could
// not answer.
func (h *Handler) session(r *http.Request) (Session, string, bool, error) {
	c, err := r.Cookie(h.cookieName())
	if err != nil {
		return Session{}, "", false, nil
	}
	s, ok, err := h.sessions.Get(r.Context(), c.Value)
	return s, c.Value, ok, err
}

func storeDown(w http.ResponseWriter, r *http.Request, err error) {
	slog.WarnContext(r.Context(), "session store unavailable", "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", "5")
	writeError(w, http.StatusServiceUnavailable, "service_unavailable", "the console cannot reach its session store; try again shortly")
}

func (h *Handler) setCookie(w http.ResponseWriter, id string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{
		Name: h.cookieName(), Value: id, Path: "/", Expires: expires,
		HttpOnly: true, Secure: h.cfg.SecureCookie, SameSite: http.SameSiteLaxMode,
	})
}

func (h *Handler) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{
		Name: h.cookieName(), Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, Secure: h.cfg.SecureCookie, SameSite: http.SameSiteLaxMode,
	})
}

// sessionView is what the page learns of its session: never the token.
type sessionView struct {
	User      json.RawMessage `json:"user"`
	ExpiresAt time.Time       `json:"expiresAt"`
	CSRFToken string          `json:"csrfToken"`
}

func view(s Session) sessionView {
	return sessionView{User: s.User, ExpiresAt: s.ExpiresAt, CSRFToken: s.CSRF}
}

// getSession answers GET /session: who is signed in, and the CSRF token; 401 when nobody.
func (h *Handler) getSession(w http.ResponseWriter, r *http.Request) {
	s, id, ok, err := h.session(r)
	if err != nil {
		storeDown(w, r, err)
		return
	}
	if !ok {
		if id != "" {
			h.clearCookie(w)
		}
		writeError(w, http.StatusUnauthorized, "unauthorized", "not signed in")
		return
	}
	writeJSON(w, http.StatusOK, view(s))
}

// verify answers POST /session/verify {token}: the magic link's code is exchanged at the
// API here, and the API session it yields stays on this server behind a new cookie.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) {
	if !h.sameOrigin(r) {
		writeError(w, http.StatusForbidden, "forbidden", "a sign-in must come from the console's own page")
		return
	}
	var in struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&in); err != nil || in.Token == "" {
		writeError(w, http.StatusBadRequest, "invalid_body", `expected {"token": "<the code from the sign-in link>"}`)
		return
	}
	body, _ := json.Marshal(map[string]string{"token": in.Token})
	res, err := h.callAPI(r.Context(), http.MethodPost, "/api/auth/magic-link/verify", "", body, r)
	if err != nil {
		writeError(w, http.StatusBadGateway, "api_unreachable", "the console could not reach the API; try again")
		return
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(res.Body, 1<<16))
	if res.StatusCode != http.StatusOK {
		// The API's own words (expired, already used, rate limited…), token-free.
		copyHeader(w.Header(), res.Header, "Retry-After")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.StatusCode)
		w.Write(answer)
		return
	}
	var api struct {
		Token     string          `json:"token"`
		User      json.RawMessage `json:"user"`
		ExpiresAt time.Time       `json:"expiresAt"`
	}
	if err := json.Unmarshal(answer, &api); err != nil || api.Token == "" {
		writeError(w, http.StatusBadGateway, "bad_gateway", "the API's sign-in answer was not understood")
		return
	}
	// A browser signing in again drops the session it had.
	if _, old, ok, _ := h.session(r); ok {
		h.sessions.Delete(r.Context(), old)
	}
	s := Session{Token: api.Token, User: api.User, ExpiresAt: api.ExpiresAt, CSRF: randomToken()}
	id, err := h.sessions.Create(r.Context(), s)
	if err != nil {
		// Nobody holds the new API session: revoke it rather than leave it live.
		if res, err := h.callAPI(context.WithoutCancel(r.Context()), http.MethodPost, "/api/auth/logout", s.Token, nil, r); err == nil {
			res.Body.Close()
		}
		storeDown(w, r, err)
		return
	}
	h.setCookie(w, id, s.ExpiresAt)
	writeJSON(w, http.StatusOK, view(s))
}

// logout answers POST /session/logout: the API revokes the token, this server forgets it and
// the browser's cookie is cleared, whatever the API answered.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	s, id, ok, err := h.session(r)
	if err != nil {
		storeDown(w, r, err)
		return
	}
	if ok && (!h.sameOrigin(r) || !csrfOK(r, s)) {
		writeError(w, http.StatusForbidden, "csrf_token_invalid", "reload the page and try again")
		return
	}
	h.clearCookie(w)
	if !ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	// Revoked at the API first: a session this server failed to forget then answers 401 and
	// is forgotten on its next use.
	res, err := h.callAPI(r.Context(), http.MethodPost, "/api/auth/logout", s.Token, nil, r)
	h.sessions.Delete(context.WithoutCancel(r.Context()), id)
	if err != nil {
		writeError(w, http.StatusBadGateway, "api_unreachable", "signed out of the console, but the API did not confirm that the session is revoked")
		return
	}
	res.Body.Close()
	if res.StatusCode >= 300 && res.StatusCode != http.StatusUnauthorized {
		writeError(w, http.StatusBadGateway, "logout_unconfirmed", "signed out of the console, but the API did not confirm that the session is revoked")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// callAPI makes one call of this server's own to the API, as the browser's client (its
// address in X-Forwarded-For, its Idempotency-Key when it sent one).
func (h *Handler) callAPI(ctx context.Context, method, path, token string, body []byte, from *http.Request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.cfg.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	copyHeader(req.Header, from.Header, "Idempotency-Key", "User-Agent")
	if ip := clientIP(from); ip != "" {
		req.Header.Set("X-Forwarded-For", ip)
	}
	return h.client.Do(req)
}

func copyHeader(dst, src http.Header, names ...string) {
	for _, n := range names {
		if v := src.Get(n); v != "" {
			dst.Set(n, v)
		}
	}
}
