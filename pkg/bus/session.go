package bus

import (
	"context"
	"errors"
	"log/slog"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// keep runs session on a fresh channel, again and again across channel and connection
// losses, until ctx ends (nil), the Conn closes (ErrClosed) or the broker refuses the
// subscription itself (a configuration error, returned).
func (c *Conn) keep(ctx context.Context, log *slog.Logger, session func(context.Context, *amqp.Channel) error) error {
	b := backoff{base: 100 * time.Millisecond, max: 5 * time.Second}
	for {
		ch, err := c.channel(ctx)
		if err == nil {
			started := time.Now()
			err = session(ctx, ch)
			ch.Close()
			// A session that ran a while was healthy; start its next backoff afresh.
			if time.Since(started) > 10*time.Second {
				b.reset()
			}
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, ErrClosed) || c.isClosing():
			return ErrClosed
		case isConfigError(err):
			log.ErrorContext(ctx, "bus subscription refused", "err", err)
			return err
		}
		log.WarnContext(ctx, "bus subscription interrupted; resubscribing", "err", err)
		if !b.sleep(ctx) {
			return nil
		}
	}
}

// closeErr turns a channel's close notification into the error that ended a session.
func closeErr(e *amqp.Error, ok bool) error {
	if !ok || e == nil {
		return errors.New("bus: channel closed")
	}
	return e
}
