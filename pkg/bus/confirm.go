package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"

	amqp "github.com/rabbitmq/amqp091-go"
)

// confirmChannel is a publishing channel in confirm mode that reopens itself on the Conn's
// current connection after a loss. Safe for concurrent use.
type confirmChannel struct {
	conn *Conn

	mu sync.Mutex
	ch *amqp.Channel
}

// get returns the open channel, opening one (and waiting for the connection) if needed.
func (p *confirmChannel) get(ctx context.Context) (*amqp.Channel, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil && !p.ch.IsClosed() {
		return p.ch, nil
	}
	ch, err := p.conn.channel(ctx)
	if err != nil {
		return nil, err
	}
	if err := ch.Confirm(false); err != nil {
		ch.Close()
		return nil, fmt.Errorf("bus: confirm mode: %w", err)
	}
	p.ch = ch
	return ch, nil
}

// drop closes ch if it is still the current one, so that the next get opens a fresh channel.
// After a confirm timeout a channel cannot be trusted: a late ack would confirm nothing we
// still track.
func (p *confirmChannel) drop(ch *amqp.Channel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch != nil && p.ch == ch {
		p.ch.Close()
		p.ch = nil
	}
}

func (p *confirmChannel) close() { p.drop(p.ch) }

var errNacked = errors.New("bus: broker refused the message (nack)")

// publish sends one message and waits for the broker's confirm.
func (p *confirmChannel) publish(ctx context.Context, exchange, key string, msg amqp.Publishing) error {
	ch, err := p.get(ctx)
	if err != nil {
		return err
	}
	dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, exchange, key, false, false, msg)
	if err != nil {
		p.drop(ch)
		return fmt.Errorf("bus: publish to %s: %w", exchange, err)
	}
	ok, err := dc.WaitContext(ctx)
	if err != nil {
		p.drop(ch)
		return err
	}
	if !ok {
		return errNacked
	}
	return nil
}
