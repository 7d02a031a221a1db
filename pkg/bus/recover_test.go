package bus

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestRecoveringTurnsAPanicIntoARetryableError(t *testing.T) {
	panics := recovering(func(context.Context, pgx.Tx, Delivery) error { panic("boom") })
	err := panics(context.Background(), nil, Delivery{ID: "m1"})
	if err == nil || !strings.Contains(err.Error(), "panicked: boom") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	if IsPermanent(err) {
		t.Fatal("a panic must be retried, not dead-lettered at once")
	}

	want := errors.New("plain failure")
	fails := recovering(func(context.Context, pgx.Tx, Delivery) error { return want })
	if err := fails(context.Background(), nil, Delivery{}); err != want {
		t.Fatalf("err = %v, want the handler's own error passed through", err)
	}
	if err := recovering(func(context.Context, pgx.Tx, Delivery) error { return nil })(context.Background(), nil, Delivery{}); err != nil {
		t.Fatalf("err = %v, want nil", err)
	}
}
