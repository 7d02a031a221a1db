package busapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
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

// The apps service reports a custom hostname's certificate failed; identity mails the owner
// what it means and where to see the CA's reason, without quoting anyone else's words.
func TestCertificateFailedMailsTheOwner(t *testing.T) {
	st, pool := storetest.New(t)
	ctx := context.Background()
	acc, owner := account.New("owner@example.com", time.Now().UTC().Truncate(time.Microsecond))
	if err := st.CreateAccount(ctx, acc, owner); err != nil {
		t.Fatal(err)
	}
	box := &mailbox{}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := busapi.CertificateMailConsumer{Repo: store.Bind, Service: usecase.New(usecase.Deps{Store: st, Mailer: box, Log: log}), Log: log}
	if got := c.Subscription(); got.Queue != "identity.certificates" || len(got.Keys) != 1 || got.Keys[0] != appsbus.KeyDomainCertificateFailed {
		t.Fatalf("subscription %+v", got)
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	event := func(accountID string) *appsv1.DomainCertificateFailed {
		return &appsv1.DomainCertificateFailed{AppId: uuid.NewString(), AccountId: accountID, Slug: "shop", Hostname: "shop.example.com", FailedAt: timestamppb.New(at)}
	}
	deliver := func(m proto.Message) error {
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: appsbus.KeyDomainCertificateFailed, Body: body, Attempt: 1}
		return pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return c.Handle(ctx, bus.TxOf(tx), d) })
	}
	if err := deliver(event(acc.ID)); err != nil {
		t.Fatal(err)
	}
	if len(box.msgs) != 1 {
		t.Fatalf("%d mails, want 1", len(box.msgs))
	}
	m := box.msgs[0]
	for _, want := range []string{"shop.example.com", "app shop", "2026-11-27 12:00 UTC", "tori domains shop", "once per failure"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("mail lacks %q:\n%s", want, m.Text)
		}
	}
	if m.To != "owner@example.com" || strings.ContainsAny(m.Subject, "\r\n") {
		t.Fatalf("mail to %q, subject %q", m.To, m.Subject)
	}
	if err := deliver(event(uuid.NewString())); err != nil || len(box.msgs) != 1 {
		t.Fatalf("unknown account: %v, %d mails", err, len(box.msgs))
	}
	box.fail = true
	if err := deliver(event(acc.ID)); !errors.Is(err, usecase.ErrMailUnavailable) || bus.IsPermanent(err) {
		t.Fatalf("refused mail: %v", err)
	}
	box.fail = false
	for name, mutate := range map[string]func(*appsv1.DomainCertificateFailed){
		"account id": func(e *appsv1.DomainCertificateFailed) { e.AccountId = "../../etc" },
		"hostname":   func(e *appsv1.DomainCertificateFailed) { e.Hostname = "shop.example.com\r\nBcc: x@evil.test" },
		"slug":       func(e *appsv1.DomainCertificateFailed) { e.Slug = "Shop\nnow" },
		"time":       func(e *appsv1.DomainCertificateFailed) { e.FailedAt = nil },
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
