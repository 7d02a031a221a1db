package bus

import (
	"context"
	"fmt"
)

// recovering is h with a panic turned into an error, which is retried like any other: one
// bad message must not take down the service's consumer, and a panic may be passing trouble.
func recovering(h TxHandler) TxHandler {
	return func(ctx context.Context, tx Tx, d Delivery) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("bus: handler panicked: %v", p)
			}
		}()
		return h(ctx, tx, d)
	}
}
