package appsbus

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"

	appsv1 "tori.dev/proto/gen/tori/apps/v1"
)

type fakeApps struct {
	queue string
	asked *appsv1.AppLookupRequest
	reply *appsv1.AppLookupReply
	err   error
}

func (f *fakeApps) Request(_ context.Context, queue string, req, reply proto.Message) error {
	f.queue, f.asked = queue, req.(*appsv1.AppLookupRequest)
	if f.err != nil {
		return f.err
	}
	proto.Merge(reply, f.reply)
	return nil
}

func TestLookup(t *testing.T) {
	mine := &appsv1.AppCreated{AppId: "a1", AccountId: "acc", Slug: "blog", Kind: "static", Zone: "local"}
	for _, tc := range []struct {
		name      string
		apps      *fakeApps
		wantApp   bool
		wantError bool
	}{
		{"found", &fakeApps{reply: &appsv1.AppLookupReply{App: mine}}, true, false},
		{"not found", &fakeApps{reply: &appsv1.AppLookupReply{}}, false, false},
		{"no responder", &fakeApps{err: errors.New("bus: no responder")}, false, true},
		{"another account's app", &fakeApps{reply: &appsv1.AppLookupReply{App: &appsv1.AppCreated{AppId: "a2", AccountId: "other", Slug: "blog"}}}, false, true},
		{"another slug", &fakeApps{reply: &appsv1.AppLookupReply{App: &appsv1.AppCreated{AppId: "a2", AccountId: "acc", Slug: "shop"}}}, false, true},
		{"no id", &fakeApps{reply: &appsv1.AppLookupReply{App: &appsv1.AppCreated{AccountId: "acc", Slug: "blog"}}}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppClient{Bus: tc.apps}.Lookup(context.Background(), "acc", "blog")
			if tc.apps.queue != QueueAppLookup || tc.apps.asked.GetAccountId() != "acc" || tc.apps.asked.GetSlug() != "blog" {
				t.Fatalf("asked %q %v", tc.apps.queue, tc.apps.asked)
			}
			if tc.wantError {
				if !errors.Is(err, ErrAppUnavailable) || got != nil {
					t.Fatalf("Lookup() = %v, %v; want ErrAppUnavailable", got, err)
				}
				return
			}
			if err != nil || (got != nil) != tc.wantApp || (tc.wantApp && got.GetAppId() != "a1") {
				t.Fatalf("Lookup() = %v, %v", got, err)
			}
		})
	}
}
