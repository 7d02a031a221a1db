package busapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/identity/internal/account"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
	"tori.dev/services/identity/internal/usecase"
)

type mailbox struct {
	mu   sync.Mutex
	msgs []usecase.Mail
	fail bool
}

func (m *mailbox) Send(_ context.Context, msg usecase.Mail) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		return errors.New("mail server said no")
	}
	m.msgs = append(m.msgs, msg)
	return nil
}

// The apps service reports an active hostname's record missing; identity, which alone knows
// the owner's address, mails them the record and the deadline.
func TestVerificationFailingMailsTheOwner(t *testing.T) {
	st, pool := storetest.New(t)
	ctx := context.Background()
	acc, owner := account.New("owner@example.com", time.Now().UTC().Truncate(time.Microsecond))
	if err := st.CreateAccount(ctx, acc, owner); err != nil {
		t.Fatal(err)
	}
	box := &mailbox{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := busapi.HostnameMailConsumer{Repo: store.Bind, Service: usecase.New(usecase.Deps{Store: st, Mailer: box, Log: log}), Log: log}
	if got := c.Subscription(); got.Queue != "identity.hostnames" || len(got.Keys) != 1 || got.Keys[0] != appsbus.KeyDomainVerificationFailing {
		t.Fatalf("subscription %+v", got)
	}
	since := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	event := func(accountID string) *appsv1.DomainVerificationFailing {
		return &appsv1.DomainVerificationFailing{
			AppId: uuid.NewString(), AccountId: accountID, Slug: "shop", Hostname: "shop.example.com",
			RecordName: "_tori-challenge.shop.example.com", RecordValue: "tori-verify=0123456789abcdef0123456789abcdef",
			MissingSince: timestamppb.New(since), DeactivateAt: timestamppb.New(since.Add(72 * time.Hour)),
		}
	}
	deliver := func(m proto.Message) error {
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: appsbus.KeyDomainVerificationFailing, Body: body, Attempt: 1}
		return pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return c.Handle(ctx, bus.TxOf(tx), d) })
	}

	if err := deliver(event(acc.ID)); err != nil {
		t.Fatal(err)
	}
	if len(box.msgs) != 1 {
		t.Fatalf("%d mails, want 1", len(box.msgs))
	}
	m := box.msgs[0]
	for _, want := range []string{"shop.example.com", "app shop", "_tori-challenge.shop.example.com",
		"tori-verify=0123456789abcdef0123456789abcdef", "2026-11-24 12:00 UTC", "before 2026-11-27 12:00 UTC", "stops serving"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("mail lacks %q:\n%s", want, m.Text)
		}
	}
	if m.To != "owner@example.com" || strings.ContainsAny(m.Subject, "\r\n") {
		t.Fatalf("mail to %q, subject %q", m.To, m.Subject)
	}

	// Any slug and hostname the apps service gives out is mailed about, by the one rule both
	// hold them to (contract/names): a slug with a leading hyphen, or a one-letter top-level
	// domain, was once dead-lettered (#37).
	for _, tc := range []struct{ slug, hostname string }{
		{"-abc", "shop.example.com"}, {"abc-", "shop.example.com"}, {strings.Repeat("a", 63), "shop.example.com"},
		{"shop", "shop.example.x"}, {"shop", "123.example.com"},
	} {
		e := event(acc.ID)
		e.Slug, e.Hostname, e.RecordName = tc.slug, tc.hostname, "_tori-challenge."+tc.hostname
		if err := deliver(e); err != nil || len(box.msgs) != 2 || !strings.Contains(box.msgs[1].Text, "app "+tc.slug) ||
			!strings.Contains(box.msgs[1].Text, tc.hostname) {
			t.Fatalf("%+v: %v, %d mails", tc, err, len(box.msgs))
		}
		box.msgs = box.msgs[:1]
	}

	// An account identity never heard of: nobody to write to, and nothing to retry.
	if err := deliver(event(uuid.NewString())); err != nil || len(box.msgs) != 1 {
		t.Fatalf("unknown account: %v, %d mails", err, len(box.msgs))
	}
	// A mail server that refuses: retried by the bus, not dropped.
	box.fail = true
	if err := deliver(event(acc.ID)); !errors.Is(err, usecase.ErrMailUnavailable) || bus.IsPermanent(err) {
		t.Fatalf("refused mail: %v", err)
	}
	box.fail = false

	// Malformed events are dead-lettered at once, and mail nobody.
	for name, mutate := range map[string]func(*appsv1.DomainVerificationFailing){
		"account id":     func(e *appsv1.DomainVerificationFailing) { e.AccountId = "../../etc" },
		"hostname":       func(e *appsv1.DomainVerificationFailing) { e.Hostname = "shop.example.com\r\nBcc: x@evil.test" },
		"record name":    func(e *appsv1.DomainVerificationFailing) { e.RecordName = "_tori-challenge.other.example.com" },
		"record value":   func(e *appsv1.DomainVerificationFailing) { e.RecordValue = "click http://evil.test" },
		"slug":           func(e *appsv1.DomainVerificationFailing) { e.Slug = "Shop\nnow" },
		"long slug":      func(e *appsv1.DomainVerificationFailing) { e.Slug = strings.Repeat("a", 64) },
		"deadline":       func(e *appsv1.DomainVerificationFailing) { e.DeactivateAt = nil },
		"missing since":  func(e *appsv1.DomainVerificationFailing) { e.MissingSince = nil },
		"empty hostname": func(e *appsv1.DomainVerificationFailing) { e.Hostname, e.RecordName = "", "_tori-challenge." },
	} {
		e := event(acc.ID)
		mutate(e)
		if err := deliver(e); !bus.IsPermanent(err) {
			t.Errorf("%s: %v, want a permanent error", name, err)
		}
	}
	if len(box.msgs) != 1 {
		t.Fatalf("%d mails after malformed events, want still 1", len(box.msgs))
	}
}
