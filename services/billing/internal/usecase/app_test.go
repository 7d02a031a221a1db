package usecase_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/testinfra"
	billingv1 "tori.dev/proto/gen/tori/billing/v1"
	billingbus "tori.dev/proto/tori/billing/v1"
	"tori.dev/services/billing/internal/accounts"
	"tori.dev/services/billing/internal/catalog"
	"tori.dev/services/billing/internal/store"
	"tori.dev/services/billing/internal/usecase"
)

var ctx = context.Background()

// recorder stands in for the outbox: it keeps what was published, and can be told to fail so
// that a test sees the change roll back with its event.
type recorder struct {
	mu      sync.Mutex
	events  []*billingv1.AccountPlanChanged
	holds   []*billingv1.AccountHoldChanged
	notices []*billingv1.AccountHoldNotice
	fail    error
}

func (r *recorder) publish(key string, msg proto.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil {
		return r.fail
	}
	switch key {
	case billingbus.KeyPlanChanged:
		r.events = append(r.events, msg.(*billingv1.AccountPlanChanged))
	case billingbus.KeyHoldChanged:
		r.holds = append(r.holds, msg.(*billingv1.AccountHoldChanged))
	case billingbus.KeyHoldNotice:
		r.notices = append(r.notices, msg.(*billingv1.AccountHoldNotice))
	default:
		return errors.New("unexpected routing key " + key)
	}
	return nil
}

func (r *recorder) noticeEvents() []*billingv1.AccountHoldNotice {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*billingv1.AccountHoldNotice(nil), r.notices...)
}

func (r *recorder) holdEvents() []*billingv1.AccountHoldChanged {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*billingv1.AccountHoldChanged(nil), r.holds...)
}

func (r *recorder) published() []*billingv1.AccountPlanChanged {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*billingv1.AccountPlanChanged(nil), r.events...)
}

// recordingStore is the real store whose transactions publish to a recorder instead of the
// outbox.
type recordingStore struct {
	usecase.Store
	rec *recorder
}

func (s recordingStore) InTx(ctx context.Context, fn func(tx usecase.Tx) error) error {
	return s.Store.InTx(ctx, func(tx usecase.Tx) error { return fn(recordingTx{tx, s.rec}) })
}

type recordingTx struct {
	usecase.Tx
	rec *recorder
}

func (tx recordingTx) Publish(_ context.Context, key string, msg proto.Message) error {
	return tx.rec.publish(key, msg)
}

func newPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	return testinfra.ServicePool(t, store.Service(""), bus.Migrations, store.Migrations)
}

func newService(t *testing.T) (*usecase.Service, usecase.Store, *recorder) {
	t.Helper()
	rec := &recorder{}
	st := recordingStore{store.New(newPool(t)), rec}
	return usecase.New(st), st, rec
}

func register(t *testing.T, svc *usecase.Service, st usecase.Store, id uuid.UUID, email string) {
	t.Helper()
	if err := st.InTx(ctx, func(tx usecase.Tx) error { return svc.RegisterAccount(ctx, tx, id, email) }); err != nil {
		t.Fatal(err)
	}
}

func checkEvent(t *testing.T, ev *billingv1.AccountPlanChanged, id uuid.UUID, plan catalog.Name, version int64) {
	t.Helper()
	p, _ := catalog.Lookup(string(plan))
	want := usecase.LimitsMessage(p.Limits)
	if ev.GetAccountId() != id.String() || ev.GetPlan() != string(plan) || ev.GetVersion() != version ||
		!proto.Equal(ev.GetLimits(), want) || ev.GetChangedAt() == nil {
		t.Fatalf("event %v; want account %s on %s at version %d with limits %v", ev, id, plan, version, want)
	}
}

func TestRegisterAccountStartsOnNestlingAndAnnouncesItOnce(t *testing.T) {
	t.Parallel()
	svc, st, rec := newService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	register(t, svc, st, id, "ada@example.com") // a redelivered account.created

	a, err := svc.AccountPlan(ctx, id)
	if err != nil || a.Plan != catalog.Nestling || a.Version != 1 || a.Email != "ada@example.com" {
		t.Fatalf("account %+v, %v", a, err)
	}
	evs := rec.published()
	if len(evs) != 1 {
		t.Fatalf("%d events, want exactly 1", len(evs))
	}
	checkEvent(t, evs[0], id, catalog.Nestling, 1)
	if !evs[0].GetChangedAt().AsTime().Equal(a.UpdatedAt) {
		t.Fatalf("event time %v, row time %v", evs[0].GetChangedAt().AsTime(), a.UpdatedAt)
	}
}

func TestUnrecordedAccountIsOnNestlingAtVersionZero(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	a, err := svc.AccountPlan(ctx, uuid.Must(uuid.NewV7()))
	if err != nil || a.Plan != catalog.Nestling || a.Version != 0 {
		t.Fatalf("unrecorded account: %+v, %v", a, err)
	}
}

func TestSetPlan(t *testing.T) {
	t.Parallel()
	svc, st, rec := newService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "Ada@Example.com")

	steps := []struct {
		name        string
		ref         accounts.Ref
		plan        string
		err         error
		changed     bool
		wantPlan    catalog.Name
		wantVersion int64
	}{
		{"upgrade by id", accounts.Ref{ID: id}, "songbird", nil, true, catalog.Songbird, 2},
		{"same plan is a no-op", accounts.Ref{ID: id}, "songbird", nil, false, catalog.Songbird, 2},
		{"by email", accounts.Ref{Email: "ada@example.com"}, "flock", nil, true, catalog.Flock, 3},
		{"back to the free plan", accounts.Ref{ID: id}, "nestling", nil, true, catalog.Nestling, 4},
		{"unknown plan", accounts.Ref{ID: id}, "eagle", catalog.ErrUnknownPlan, false, catalog.Nestling, 4},
		{"unknown account", accounts.Ref{ID: uuid.Must(uuid.NewV7())}, "flock", accounts.ErrNotFound, false, catalog.Nestling, 4},
	}
	events := 1 // registration's
	for _, s := range steps {
		a, changed, err := svc.SetPlan(ctx, s.ref, s.plan)
		if !errors.Is(err, s.err) || changed != s.changed {
			t.Fatalf("%s: changed %v, err %v; want %v, %v", s.name, changed, err, s.changed, s.err)
		}
		if err == nil && (a.Plan != s.wantPlan || a.Version != s.wantVersion) {
			t.Fatalf("%s: returned %+v", s.name, a)
		}
		stored, _ := svc.AccountPlan(ctx, id)
		if stored.Plan != s.wantPlan || stored.Version != s.wantVersion {
			t.Fatalf("%s: stored %+v, want %s at version %d", s.name, stored, s.wantPlan, s.wantVersion)
		}
		if changed {
			events++
		}
		evs := rec.published()
		if len(evs) != events {
			t.Fatalf("%s: %d events, want %d", s.name, len(evs), events)
		}
		if changed {
			checkEvent(t, evs[len(evs)-1], id, s.wantPlan, s.wantVersion)
		}
	}
}

func TestSetPlanRollsBackWhenItsEventCannotBeWritten(t *testing.T) {
	t.Parallel()
	svc, st, rec := newService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	rec.fail = errors.New("outbox unavailable")

	if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, "flock"); !errors.Is(err, rec.fail) {
		t.Fatalf("SetPlan: %v, want the publish error", err)
	}
	a, _ := svc.AccountPlan(ctx, id)
	if a.Plan != catalog.Nestling || a.Version != 1 {
		t.Fatalf("a plan change without its event was kept: %+v", a)
	}
}

func TestConcurrentPlanChangesGetDistinctVersions(t *testing.T) {
	t.Parallel()
	svc, st, rec := newService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")

	plans := []string{"songbird", "flock", "nestling", "flock", "songbird", "nestling", "flock", "songbird"}
	var wg sync.WaitGroup
	errs := make(chan error, len(plans))
	for _, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, p)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	evs := rec.published()
	seen := map[int64]bool{}
	var last *billingv1.AccountPlanChanged
	for _, ev := range evs {
		if seen[ev.GetVersion()] {
			t.Fatalf("version %d announced twice", ev.GetVersion())
		}
		seen[ev.GetVersion()] = true
		if last == nil || ev.GetVersion() > last.GetVersion() {
			last = ev
		}
	}
	a, _ := svc.AccountPlan(ctx, id)
	if int64(len(evs)) != a.Version || last.GetVersion() != a.Version || last.GetPlan() != string(a.Plan) {
		t.Fatalf("%d events, newest %v; stored %+v", len(evs), last, a)
	}
}

func TestStateWithoutPaidPlans(t *testing.T) {
	t.Parallel()
	svc, st, _ := newService(t)
	id := uuid.Must(uuid.NewV7())
	register(t, svc, st, id, "ada@example.com")
	if _, _, err := svc.SetPlan(ctx, accounts.Ref{ID: id}, "flock"); err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(context.Context, uuid.UUID) (usecase.State, error){"State": svc.State, "Sync": svc.Sync} {
		s, err := read(ctx, id)
		if err != nil || s.Account.Plan != catalog.Flock || s.Configured || len(s.Catalog) != 3 {
			t.Fatalf("%s: %+v, %v", name, s, err)
		}
	}
}

func TestCheckoutChecksTheRequestThenRefuses(t *testing.T) {
	t.Parallel()
	svc, _, _ := newService(t)
	cases := []struct {
		plan, interval string
		want           error
	}{
		{"songbird", "month", usecase.ErrUnavailable},
		{"flock", "year", usecase.ErrUnavailable},
		{"nestling", "month", catalog.ErrNotPurchasable},
		{"eagle", "month", catalog.ErrUnknownPlan},
		{"", "", catalog.ErrUnknownPlan},
		{"songbird", "week", catalog.ErrUnknownInterval},
		{"songbird", "", catalog.ErrUnknownInterval},
	}
	account := uuid.Must(uuid.NewV7())
	for _, tc := range cases {
		if url, err := svc.Checkout(ctx, account, tc.plan, tc.interval); !errors.Is(err, tc.want) || url != "" {
			t.Errorf("Checkout(%q, %q) = %q, %v, want %v", tc.plan, tc.interval, url, err, tc.want)
		}
	}
	if url, err := svc.Portal(ctx, account); !errors.Is(err, usecase.ErrUnavailable) || url != "" {
		t.Errorf("Portal() = %q, %v, want ErrUnavailable", url, err)
	}
}
