package bus

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestOwnerCheckRefusesWhatNoHandlerShouldSee(t *testing.T) {
	owns := func(publisher, key string) bool { return strings.HasPrefix(key, publisher+".") }
	unreadable := errors.New("bus: unreadable bundle")
	cases := []struct {
		name   string
		msg    func() *message
		refuse string // part of the reason; "" when the event goes on to its handler
	}{
		{"the key's owner", func() *message { return testMessage("m1", "apps", "apps.app.created") }, ""},
		{"another principal", func() *message { return testMessage("m1", "deploys", "apps.app.created") }, `publisher "deploys" (user "deploys") does not own routing key "apps.app.created"`},
		{"no publisher", func() *message { return testMessage("m1", "", "apps.app.created") }, "does not own routing key"},
		{"no id", func() *message { return testMessage("", "apps", "apps.app.created") }, "message has no id"},
		{"an unreadable bundle", func() *message {
			m := testMessage("m1", "apps", "apps.app.created")
			m.unreadable = unreadable
			return m
		}, "unreadable bundle"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tried := 0
			try := ownerChecked(owns, func(context.Context, *message, int) error { tried++; return nil })
			err := try(context.Background(), tc.msg(), 1)
			if tc.refuse == "" {
				if err != nil || tried != 1 {
					t.Fatalf("err = %v after %d tries, want the handler tried once", err, tried)
				}
				return
			}
			var r refusal
			if !errors.As(err, &r) || !strings.Contains(err.Error(), tc.refuse) {
				t.Fatalf("err = %v, want a refusal saying %q", err, tc.refuse)
			}
			if tried != 0 {
				t.Fatalf("the handler was tried %d times for a refused event", tried)
			}
		})
	}
}
