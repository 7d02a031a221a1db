package busapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"tori.dev/pkg/bus"
	"tori.dev/pkg/objectstore"
	"tori.dev/pkg/testinfra"
	deploysv1 "tori.dev/proto/gen/tori/deploys/v1"
	"tori.dev/services/deploys/internal/busapi"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/objects"
	"tori.dev/services/deploys/internal/store"
	"tori.dev/services/deploys/internal/store/storetest"
	"tori.dev/services/deploys/internal/usecase"
)

// A zone asks for its artifact's URL when it starts the fetch, and the URL, made with deploys'
// own credentials on the real S3 server, reads exactly that artifact for minutes. Only the
// zone that hosts the deploy, judged by who published the request, gets one; another zone, a
// service, a deploy that ended or an image deploy get a refusal and no URL.
func TestArtifactURLOnlyForTheHostingZone(t *testing.T) {
	pool := storetest.NewPool(t)
	ctx := context.Background()
	srv := testinfra.StartObjectStore(t)
	vars := srv.Holding(t, "DEPLOYS", "tori-deploys", "tori-artifacts")
	bucket, err := objectstore.New(objectstore.Config{URL: vars["OBJECT_STORE_URL"], AccessKey: vars["DEPLOYS_OBJECT_STORE_ACCESS_KEY"], SecretKey: vars["DEPLOYS_OBJECT_STORE_SECRET_KEY"], Bucket: vars["DEPLOYS_OBJECT_STORE_BUCKET"]})
	if err != nil {
		t.Fatal(err)
	}
	objs := objects.NewS3(bucket)
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	svc := usecase.New(usecase.Deps{Store: store.New(pool), Objects: objs, ArtifactLinks: objs, Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)})

	appID, account := uuid.NewString(), uuid.NewString()
	building, ended, image := uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String(), uuid.Must(uuid.NewV7()).String()
	key := "artifacts/" + building
	up, err := objs.Create(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(up, "the tarball")
	if err := up.Commit(); err != nil {
		t.Fatal(err)
	}
	err = svc.Store().InTx(ctx, func(tx usecase.Tx) error {
		if err := svc.OnAppCreated(ctx, tx, usecase.App{ID: appID, AccountID: account, Slug: "web", Kind: "static", Zone: "eu-1"}, now); err != nil {
			return err
		}
		for _, d := range []*deploy.Deploy{
			{ID: building, Kind: deploy.KindStatic, Status: deploy.Building, ArtifactKey: key},
			{ID: ended, Kind: deploy.KindStatic, Status: deploy.Failed, ArtifactKey: key},
			{ID: image, Kind: deploy.KindImage, Status: deploy.Building, Image: "ghcr.io/acme/web:1"},
		} {
			d.AppID, d.AccountID, d.CreatedAt, d.UpdatedAt = appID, account, now, now
			if err := tx.Insert(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	respond := busapi.ArtifactURL(svc)
	ask := func(publisher, deployID string) (*deploysv1.ArtifactURLReply, error) {
		body, _ := proto.Marshal(&deploysv1.ArtifactURLRequest{AppId: appID, DeployId: deployID})
		reply, err := respond(ctx, bus.Delivery{ID: uuid.NewString(), Body: body, Attempt: 1, Publisher: publisher})
		if err != nil {
			return nil, err
		}
		return reply.(*deploysv1.ArtifactURLReply), nil
	}

	reply, err := ask(bus.ZonePrincipal("eu-1"), building)
	if err != nil {
		t.Fatalf("the hosting zone: %v", err)
	}
	if got, want := reply.GetExpiresAt().AsTime(), now.Add(usecase.ArtifactURLLifetime); !got.Equal(want) || usecase.ArtifactURLLifetime > 15*time.Minute {
		t.Errorf("expires at %v, want %v, a few minutes away", got, want)
	}
	if !strings.HasPrefix(reply.GetUrl(), srv.URL+"/tori-artifacts/"+key+"?") || !strings.Contains(reply.GetUrl(), "X-Amz-Expires=300") {
		t.Errorf("url %q is not a 5-minute presigned GET of the artifact", reply.GetUrl())
	}
	resp, err := http.Get(reply.GetUrl())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(b) != "the tarball" {
		t.Fatalf("the URL read %d %q", resp.StatusCode, b)
	}

	for _, c := range []struct {
		name, publisher, deploy, code string
	}{
		{"another zone", bus.ZonePrincipal("us-1"), building, bus.CodeForbidden},
		{"a service", bus.PrincipalApps, building, bus.CodeForbidden},
		{"a deploy that ended", bus.ZonePrincipal("eu-1"), ended, bus.CodeForbidden},
		{"an unknown deploy", bus.ZonePrincipal("eu-1"), uuid.NewString(), bus.CodeForbidden},
		{"an image deploy", bus.ZonePrincipal("eu-1"), image, "not_found"},
	} {
		reply, err := ask(c.publisher, c.deploy)
		var remote *bus.RemoteError
		if !errors.As(err, &remote) || remote.Code != c.code {
			t.Errorf("%s: %v %v, want a %s refusal", c.name, reply, err, c.code)
		}
	}
}
