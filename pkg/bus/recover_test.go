package bus

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRecoveringTurnsAPanicIntoARetryableError(t *testing.T) {
	panics := recovering(func(context.Context, Tx, Delivery) error { panic("boom") })
	err := panics(context.Background(), Tx{}, Delivery{ID: "m1"})
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	if IsPermanent(err) {
		t.Fatal("a panic must be retried, not dead-lettered at once")
	}

	want := errors.New("plain failure")
	fails := recovering(func(context.Context, Tx, Delivery) error { return want })
	if err := fails(context.Background(), Tx{}, Delivery{}); err != want {
		t.Fatalf("err = %v, want the handler's own error passed through", err)
	}
	if err := recovering(func(context.Context, Tx, Delivery) error { return nil })(context.Background(), Tx{}, Delivery{}); err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
}
