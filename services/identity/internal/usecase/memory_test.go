package usecase_test

import (
	"context"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

// memory is an in-memory usecase.Store: rows are copied in and out, as a database's are, and
// InTx runs under one lock and rolls back on error, so a refused change leaves nothing
// behind. Secrets are kept by their hash only, as the real store keeps them.
type memory struct {
	mu         sync.Mutex
	accounts   map[string]account.Account
	users      map[string]account.User // by email
	plans      map[string]account.Plan
	magicLinks map[string]auth.MagicLink // by hash
	sessions   map[string]auth.Session   // by hash
	tokens     map[string]auth.APIToken  // by hash
	grants     map[string]auth.DeviceGrant
	codes      map[string]auth.AuthCode // by hash
	published  []string
	teamsNotKept
}

func newMemory() *memory {
	return &memory{accounts: map[string]account.Account{}, users: map[string]account.User{}, plans: map[string]account.Plan{},
		magicLinks: map[string]auth.MagicLink{}, sessions: map[string]auth.Session{}, tokens: map[string]auth.APIToken{},
		grants: map[string]auth.DeviceGrant{}, codes: map[string]auth.AuthCode{}}
}

func key(hash []byte) string { return string(hash) }

func (m *memory) InTx(_ context.Context, fn func(usecase.Repo) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	accounts, users, plans, grants, codes := maps.Clone(m.accounts), maps.Clone(m.users), maps.Clone(m.plans), maps.Clone(m.grants), maps.Clone(m.codes)
	links, sessions, tokens, published := maps.Clone(m.magicLinks), maps.Clone(m.sessions), maps.Clone(m.tokens), slices.Clone(m.published)
	if err := fn(tx{m: m}); err != nil {
		m.accounts, m.users, m.plans, m.grants, m.codes = accounts, users, plans, grants, codes
		m.magicLinks, m.sessions, m.tokens, m.published = links, sessions, tokens, published
		return err
	}
	return nil
}

// tx is the Repo inside InTx, where the lock is held already; the helpers on memory below
// are called with it held.
type tx struct {
	m *memory
	teamsNotKept
}

func (m *memory) userByEmail(email string) (account.User, error) {
	u, ok := m.users[email]
	if !ok {
		return account.User{}, account.ErrNotFound
	}
	return u, nil
}

func (m *memory) account(id string) (account.Account, account.User, error) {
	a, ok := m.accounts[id]
	if !ok {
		return account.Account{}, account.User{}, account.ErrNotFound
	}
	for _, u := range m.users {
		if u.AccountID == id {
			return a, u, nil
		}
	}
	return account.Account{}, account.User{}, account.ErrNotFound
}

func (m *memory) plan(accountID string) (account.Plan, error) {
	p, ok := m.plans[accountID]
	if !ok {
		return account.Plan{}, account.ErrNotFound
	}
	return p, nil
}

func (m *memory) savePlan(accountID string, p account.Plan) (bool, error) {
	if old, ok := m.plans[accountID]; ok && old.Version >= p.Version {
		return false, nil
	}
	m.plans[accountID] = p
	return true, nil
}

func (m *memory) session(hash []byte) (auth.Session, error) {
	s, ok := m.sessions[key(hash)]
	if !ok {
		return auth.Session{}, auth.ErrNotFound
	}
	return s, nil
}

func (m *memory) token(hash []byte) (auth.APIToken, error) {
	t, ok := m.tokens[key(hash)]
	if !ok {
		return auth.APIToken{}, auth.ErrNotFound
	}
	return t, nil
}

func (m *memory) activeTokens(accountID string) []auth.APIToken {
	var out []auth.APIToken
	for _, t := range m.tokens {
		if t.AccountID == accountID && t.RevokedAt == nil {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

func (m *memory) touch(id string, at time.Time) error {
	for k, t := range m.tokens {
		if t.ID == id {
			t.LastUsedAt = &at
			m.tokens[k] = t
		}
	}
	return nil
}

func (m *memory) grantBy(match func(auth.DeviceGrant) bool) (auth.DeviceGrant, error) {
	for _, g := range m.grants {
		if match(g) {
			return g, nil
		}
	}
	return auth.DeviceGrant{}, auth.ErrNotFound
}

func (m *memory) createGrant(g auth.DeviceGrant) (bool, error) {
	if _, err := m.grantBy(func(o auth.DeviceGrant) bool { return key(o.UserHash) == key(g.UserHash) }); err == nil {
		return false, nil
	}
	m.grants[g.ID] = g
	return true, nil
}

// Repo inside a transaction.

func (t tx) LockEmail(context.Context, string) error { return nil }
func (t tx) UserByEmail(_ context.Context, email string) (account.User, error) {
	return t.m.userByEmail(email)
}
func (t tx) CreateAccount(_ context.Context, a account.Account, u account.User) error {
	t.m.accounts[a.ID], t.m.users[u.Email] = a, u
	return nil
}
func (t tx) Account(_ context.Context, id string) (account.Account, account.User, error) {
	return t.m.account(id)
}
func (t tx) LockAccount(ctx context.Context, id string) (account.Account, account.User, error) {
	return t.Account(ctx, id)
}
func (t tx) SaveAccount(_ context.Context, a account.Account) error {
	t.m.accounts[a.ID] = a
	return nil
}
func (t tx) Plan(_ context.Context, accountID string) (account.Plan, error) {
	return t.m.plan(accountID)
}
func (t tx) SavePlan(_ context.Context, accountID string, p account.Plan) (bool, error) {
	return t.m.savePlan(accountID, p)
}
func (t tx) CreateMagicLink(_ context.Context, ml auth.MagicLink) error {
	t.m.magicLinks[key(ml.Hash)] = ml
	return nil
}
func (t tx) CountMagicLinksSince(_ context.Context, email string, since time.Time) (int, error) {
	n := 0
	for _, ml := range t.m.magicLinks {
		if ml.Email == email && ml.CreatedAt.After(since) {
			n++
		}
	}
	return n, nil
}
func (t tx) LockMagicLink(_ context.Context, hash []byte) (auth.MagicLink, error) {
	ml, ok := t.m.magicLinks[key(hash)]
	if !ok {
		return auth.MagicLink{}, auth.ErrNotFound
	}
	return ml, nil
}
func (t tx) SaveMagicLink(ctx context.Context, ml auth.MagicLink) error {
	return t.CreateMagicLink(ctx, ml)
}
func (t tx) CreateSession(_ context.Context, s auth.Session) error {
	t.m.sessions[key(s.Hash)] = s
	return nil
}
func (t tx) SessionByHash(_ context.Context, hash []byte) (auth.Session, error) {
	return t.m.session(hash)
}
func (t tx) RevokeSession(_ context.Context, accountID, id string, at time.Time) (bool, error) {
	for k, s := range t.m.sessions {
		if s.ID == id && s.AccountID == accountID && s.RevokedAt == nil {
			s.RevokedAt = &at
			t.m.sessions[k] = s
			return true, nil
		}
	}
	return false, nil
}
func (t tx) CreateAPIToken(_ context.Context, tok auth.APIToken) error {
	t.m.tokens[key(tok.Hash)] = tok
	return nil
}
func (t tx) APITokenByHash(_ context.Context, hash []byte) (auth.APIToken, error) {
	return t.m.token(hash)
}
func (t tx) TouchAPIToken(_ context.Context, id string, at time.Time) error {
	return t.m.touch(id, at)
}
func (t tx) ListAPITokens(_ context.Context, accountID string) ([]auth.APIToken, error) {
	return t.m.activeTokens(accountID), nil
}
func (t tx) CountActiveAPITokens(_ context.Context, accountID string) (int, error) {
	return len(t.m.activeTokens(accountID)), nil
}
func (t tx) RevokeAPIToken(_ context.Context, accountID, id string, at time.Time) error {
	for k, tok := range t.m.tokens {
		if tok.ID == id && tok.AccountID == accountID && tok.RevokedAt == nil {
			tok.RevokedAt = &at
			t.m.tokens[k] = tok
			return nil
		}
	}
	return auth.ErrNotFound
}
func (t tx) CreateDeviceGrant(_ context.Context, g auth.DeviceGrant) (bool, error) {
	return t.m.createGrant(g)
}
func (t tx) LockDeviceGrantByDeviceCode(_ context.Context, hash []byte) (auth.DeviceGrant, error) {
	return t.m.grantBy(func(g auth.DeviceGrant) bool { return key(g.DeviceHash) == key(hash) })
}
func (t tx) LockDeviceGrantByUserCode(_ context.Context, hash []byte) (auth.DeviceGrant, error) {
	return t.m.grantBy(func(g auth.DeviceGrant) bool { return key(g.UserHash) == key(hash) })
}
func (t tx) SaveDeviceGrant(_ context.Context, g auth.DeviceGrant) error {
	t.m.grants[g.ID] = g
	return nil
}
func (t tx) CreateAuthCode(_ context.Context, c auth.AuthCode) error {
	t.m.codes[key(c.Hash)] = c
	return nil
}
func (t tx) LockAuthCode(_ context.Context, hash []byte) (auth.AuthCode, error) {
	c, ok := t.m.codes[key(hash)]
	if !ok {
		return auth.AuthCode{}, auth.ErrNotFound
	}
	return c, nil
}
func (t tx) SaveAuthCode(ctx context.Context, c auth.AuthCode) error { return t.CreateAuthCode(ctx, c) }
func (t tx) Publish(_ context.Context, routingKey string, _ proto.Message) error {
	t.m.published = append(t.m.published, routingKey)
	return nil
}

// The Store outside a transaction: each call is a transaction of its own.

func (m *memory) inOne(fn func(tx) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fn(tx{m: m})
}

func (m *memory) LockEmail(context.Context, string) error { return nil }
func (m *memory) UserByEmail(ctx context.Context, email string) (u account.User, err error) {
	err = m.inOne(func(t tx) error { u, err = t.UserByEmail(ctx, email); return err })
	return u, err
}
func (m *memory) CreateAccount(ctx context.Context, a account.Account, u account.User) error {
	return m.inOne(func(t tx) error { return t.CreateAccount(ctx, a, u) })
}
func (m *memory) Account(ctx context.Context, id string) (a account.Account, u account.User, err error) {
	err = m.inOne(func(t tx) error { a, u, err = t.Account(ctx, id); return err })
	return a, u, err
}
func (m *memory) LockAccount(ctx context.Context, id string) (account.Account, account.User, error) {
	return m.Account(ctx, id)
}
func (m *memory) SaveAccount(ctx context.Context, a account.Account) error {
	return m.inOne(func(t tx) error { return t.SaveAccount(ctx, a) })
}
func (m *memory) Plan(ctx context.Context, accountID string) (p account.Plan, err error) {
	err = m.inOne(func(t tx) error { p, err = t.Plan(ctx, accountID); return err })
	return p, err
}
func (m *memory) SavePlan(ctx context.Context, accountID string, p account.Plan) (saved bool, err error) {
	err = m.inOne(func(t tx) error { saved, err = t.SavePlan(ctx, accountID, p); return err })
	return saved, err
}
func (m *memory) CreateMagicLink(ctx context.Context, ml auth.MagicLink) error {
	return m.inOne(func(t tx) error { return t.CreateMagicLink(ctx, ml) })
}
func (m *memory) CountMagicLinksSince(ctx context.Context, email string, since time.Time) (n int, err error) {
	err = m.inOne(func(t tx) error { n, err = t.CountMagicLinksSince(ctx, email, since); return err })
	return n, err
}
func (m *memory) LockMagicLink(ctx context.Context, hash []byte) (ml auth.MagicLink, err error) {
	err = m.inOne(func(t tx) error { ml, err = t.LockMagicLink(ctx, hash); return err })
	return ml, err
}
func (m *memory) SaveMagicLink(ctx context.Context, ml auth.MagicLink) error {
	return m.inOne(func(t tx) error { return t.SaveMagicLink(ctx, ml) })
}
func (m *memory) CreateSession(ctx context.Context, s auth.Session) error {
	return m.inOne(func(t tx) error { return t.CreateSession(ctx, s) })
}
func (m *memory) SessionByHash(ctx context.Context, hash []byte) (s auth.Session, err error) {
	err = m.inOne(func(t tx) error { s, err = t.SessionByHash(ctx, hash); return err })
	return s, err
}
func (m *memory) RevokeSession(ctx context.Context, accountID, id string, at time.Time) (ok bool, err error) {
	err = m.inOne(func(t tx) error { ok, err = t.RevokeSession(ctx, accountID, id, at); return err })
	return ok, err
}
func (m *memory) CreateAPIToken(ctx context.Context, tok auth.APIToken) error {
	return m.inOne(func(t tx) error { return t.CreateAPIToken(ctx, tok) })
}
func (m *memory) APITokenByHash(ctx context.Context, hash []byte) (tok auth.APIToken, err error) {
	err = m.inOne(func(t tx) error { tok, err = t.APITokenByHash(ctx, hash); return err })
	return tok, err
}
func (m *memory) TouchAPIToken(ctx context.Context, id string, at time.Time) error {
	return m.inOne(func(t tx) error { return t.TouchAPIToken(ctx, id, at) })
}
func (m *memory) ListAPITokens(ctx context.Context, accountID string) (out []auth.APIToken, err error) {
	err = m.inOne(func(t tx) error { out, err = t.ListAPITokens(ctx, accountID); return err })
	return out, err
}
func (m *memory) CountActiveAPITokens(ctx context.Context, accountID string) (n int, err error) {
	err = m.inOne(func(t tx) error { n, err = t.CountActiveAPITokens(ctx, accountID); return err })
	return n, err
}
func (m *memory) RevokeAPIToken(ctx context.Context, accountID, id string, at time.Time) error {
	return m.inOne(func(t tx) error { return t.RevokeAPIToken(ctx, accountID, id, at) })
}
func (m *memory) CreateDeviceGrant(ctx context.Context, g auth.DeviceGrant) (ok bool, err error) {
	err = m.inOne(func(t tx) error { ok, err = t.CreateDeviceGrant(ctx, g); return err })
	return ok, err
}
func (m *memory) LockDeviceGrantByDeviceCode(ctx context.Context, hash []byte) (g auth.DeviceGrant, err error) {
	err = m.inOne(func(t tx) error { g, err = t.LockDeviceGrantByDeviceCode(ctx, hash); return err })
	return g, err
}
func (m *memory) LockDeviceGrantByUserCode(ctx context.Context, hash []byte) (g auth.DeviceGrant, err error) {
	err = m.inOne(func(t tx) error { g, err = t.LockDeviceGrantByUserCode(ctx, hash); return err })
	return g, err
}
func (m *memory) SaveDeviceGrant(ctx context.Context, g auth.DeviceGrant) error {
	return m.inOne(func(t tx) error { return t.SaveDeviceGrant(ctx, g) })
}
func (m *memory) CreateAuthCode(ctx context.Context, c auth.AuthCode) error {
	return m.inOne(func(t tx) error { return t.CreateAuthCode(ctx, c) })
}
func (m *memory) LockAuthCode(ctx context.Context, hash []byte) (c auth.AuthCode, err error) {
	err = m.inOne(func(t tx) error { c, err = t.LockAuthCode(ctx, hash); return err })
	return c, err
}
func (m *memory) SaveAuthCode(ctx context.Context, c auth.AuthCode) error {
	return m.inOne(func(t tx) error { return t.SaveAuthCode(ctx, c) })
}
func (m *memory) Publish(ctx context.Context, routingKey string, msg proto.Message) error {
	return m.inOne(func(t tx) error { return t.Publish(ctx, routingKey, msg) })
}
func (m *memory) DeleteEndedBefore(context.Context, time.Time) (int64, error) { return 0, nil }

// mailbox keeps the mail sent, or fails every send when down.
type mailbox struct {
	mu   sync.Mutex
	sent []usecase.Mail
	down bool
}

func (b *mailbox) Send(_ context.Context, m usecase.Mail) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return errMailServerDown
	}
	b.sent = append(b.sent, m)
	return nil
}

var errMailServerDown = &url.Error{Op: "dial", URL: "smtp://mail.test:25", Err: context.DeadlineExceeded}

// billing answers every account with plan.
type billing struct{ plan account.Plan }

func (b billing) AccountPlan(context.Context, string) (account.Plan, error) { return b.plan, nil }

// world is an identity service over memory, on a clock the test moves.
type world struct {
	t    *testing.T
	m    *memory
	mail *mailbox
	svc  *usecase.Service
	now  time.Time
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, m: newMemory(), mail: &mailbox{}, now: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
	w.svc = usecase.New(usecase.Deps{Store: w.m, Mailer: w.mail, Plans: billing{account.Plan{Name: "nestling", Version: 1}},
		Log: slogDiscard, Now: func() time.Time { return w.now }, ConsoleURL: "https://console.tori.test/"})
	return w
}

// lastCode is the code in the last sign-in mail's link.
func (w *world) lastCode() string {
	w.t.Helper()
	w.mail.mu.Lock()
	defer w.mail.mu.Unlock()
	if len(w.mail.sent) == 0 {
		w.t.Fatal("no mail sent")
	}
	text := w.mail.sent[len(w.mail.sent)-1].Text
	const link = "https://console.tori.test/auth/verify?token="
	i := strings.Index(text, link)
	if i < 0 {
		w.t.Fatalf("no sign-in link in %q", text)
	}
	rest := text[i+len(link):]
	code, err := url.QueryUnescape(rest[:strings.IndexByte(rest, '\n')])
	if err != nil {
		w.t.Fatal(err)
	}
	return code
}

// signIn mails a link to email and redeems it: the session's caller and its token.
func (w *world) signIn(email string) (callerid.Caller, string) {
	w.t.Helper()
	if err := w.svc.RequestMagicLink(context.Background(), email); err != nil {
		w.t.Fatal(err)
	}
	in, err := w.svc.VerifyMagicLink(context.Background(), w.lastCode())
	if err != nil {
		w.t.Fatal(err)
	}
	return callerid.Caller{AccountID: in.User.AccountID, UserID: in.User.ID, TokenKind: callerid.KindSession, TokenID: in.Session.ID}, in.Token
}

// keys returns the routing keys published since the last call.
func (w *world) keys() []string {
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	out := w.m.published
	w.m.published = nil
	return out
}

var slogDiscard = slog.New(slog.DiscardHandler)
