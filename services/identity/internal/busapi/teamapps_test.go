package busapi_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/pgstore"
	appsv1 "tori.dev/proto/gen/tori/apps/v1"
	appsbus "tori.dev/proto/tori/apps/v1"
	"tori.dev/services/identity/internal/busapi"
	"tori.dev/services/identity/internal/store"
	"tori.dev/services/identity/internal/store/storetest"
)

// Identity keeps which team owns which app from apps' events: a redelivery changes nothing,
// and a malformed event is dead-lettered at once.
func TestTeamAppsFollowAppsEvents(t *testing.T) {
	st, pool := storetest.New(t)
	ctx := context.Background()
	c := busapi.TeamAppsConsumer{Repo: store.Bind, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	sub := c.Subscription()
	if sub.Queue != "identity.team_apps" || len(sub.Keys) != 2 || sub.Keys[0] != appsbus.KeyAppCreated || sub.Keys[1] != appsbus.KeyAppDeleted {
		t.Fatalf("subscription %+v", sub)
	}
	handle := func(key string, m proto.Message) error {
		body, _ := proto.Marshal(m)
		d := bus.Delivery{ID: uuid.NewString(), RoutingKey: key, Body: body}
		return pgstore.InTx(ctx, pool, func(tx pgx.Tx) error { return c.Handle(ctx, bus.TxOf(tx), d) })
	}
	teamID, appID := uuid.NewString(), uuid.NewString()
	for range 2 {
		if err := handle(appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: appID, AccountId: teamID, Slug: "site"}); err != nil {
			t.Fatal(err)
		}
	}
	if has, err := st.TeamHasApps(ctx, teamID); err != nil || !has {
		t.Fatalf("after app.created: %v %v", has, err)
	}
	for range 2 {
		if err := handle(appsbus.KeyAppDeleted, &appsv1.AppDeleted{AppId: appID, AccountId: teamID, Slug: "site"}); err != nil {
			t.Fatal(err)
		}
	}
	if has, _ := st.TeamHasApps(ctx, teamID); has {
		t.Fatal("after app.deleted the team still has the app")
	}

	for _, bad := range []struct {
		key string
		msg proto.Message
	}{
		{appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: appID, Slug: "site"}},
		{appsbus.KeyAppCreated, &appsv1.AppCreated{AppId: appID, AccountId: teamID, Slug: "Not A Slug"}},
		{appsbus.KeyAppDeleted, &appsv1.AppDeleted{AccountId: teamID}},
		{"apps.app.renamed", &appsv1.AppDeleted{AppId: appID}},
	} {
		if err := handle(bad.key, bad.msg); !bus.IsPermanent(err) {
			t.Errorf("%s %v: want a permanent error, got %v", bad.key, bad.msg, err)
		}
	}
}
