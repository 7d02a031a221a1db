package bus

import (
	"context"
	"fmt"
	"strings"

	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/codes"
)

// Headers a dead-lettered message carries. hdrQueue holds the full (namespaced) queue name, the
// one the broker knows, so ReplayDeadLetters can route by it as it stands.
const (
	hdrReason     = "x-tori-reason"
	hdrQueue      = "x-tori-queue"
	hdrRoutingKey = "x-tori-routing-key"
	hdrAttempts   = "x-tori-attempts"
)

// maxReasonLen keeps a runaway error text (a whole SQL statement, a stack) out of the headers.
const maxReasonLen = 2000

// parkFunc parks m's event in the dead-letter queue for reason after attempts.
type parkFunc func(m *message, reason error, attempts int) outcome

// deadLettering ends what retry could not handle by parking it: the last step of an event's
// way (pipeline.go).
func deadLettering(park parkFunc, retry retryFunc) settleFunc {
	return func(ctx context.Context, m *message, failed int, err error) outcome {
		v := retry(ctx, m, failed, err)
		switch {
		case v.left:
			return left
		case v.err == nil:
			return ended
		}
		if !v.refused {
			m.span.SetStatus(codes.Error, "dead-lettered")
		}
		return park(m, v.err, v.attempts)
	}
}

// deadLetter parks m's event in the dead-letter queue, as a message of its own even when it
// came in a bundle: ended once the broker has it, notParked when the broker will not take it
// (the caller returns its delivery to the queue, to be tried again: nothing is dropped), left
// when the session has ended.
func (s *consumeSession) deadLetter(m *message, reason error, attempts int) outcome {
	ctx, ev, key := m.ctx, m.ev, m.key
	log := m.log().With("attempts", attempts)
	if s.stopped() {
		// The ack could not follow: the broker will redeliver it and it is tried afresh,
		// rather than parked twice.
		return left
	}
	text := reason.Error()
	if len(text) > maxReasonLen {
		text = strings.ToValidUTF8(text[:maxReasonLen], "")
	}
	headers := userHeaders(ev.headers)
	headers[hdrReason] = text
	headers[hdrQueue] = s.queue
	headers[hdrRoutingKey] = key
	headers[hdrAttempts] = int32(attempts)
	headers[hdrPublisher] = m.carrier.d.UserId
	err := s.dl.publish(ctx, s.conn.names.deadLetterX(), key, amqp.Publishing{
		DeliveryMode: amqp.Persistent,
		ContentType:  ev.contentType,
		MessageId:    ev.id,
		UserId:       s.conn.user,
		Type:         ev.typ,
		Timestamp:    ev.timestamp,
		Headers:      headers,
		Body:         ev.body,
	})
	if err != nil {
		log.ErrorContext(ctx, "bus dead-letter failed; returning message to its queue", "err", err, "reason", text)
		return notParked
	}
	log.WarnContext(ctx, "bus message dead-lettered", "reason", text)
	deadLetters.WithLabelValues(s.queueLabel()).Inc()
	return ended
}

// userHeaders copies the application's headers (trace context and the like), leaving out the
// broker's and our own x- bookkeeping.
func userHeaders(in amqp.Table) amqp.Table {
	out := amqp.Table{}
	for k, v := range in {
		if !strings.HasPrefix(k, "x-") {
			out[k] = v
		}
	}
	return out
}

// ReplayDeadLetters moves up to max dead-lettered messages back to the queue each came from,
// with a fresh attempt count. Returns how many moved.
//
// A message is acknowledged in the dead-letter queue only after the broker confirmed it in
// its queue. One whose queue is unknown or gone stays in the dead-letter queue.
func (c *Conn) ReplayDeadLetters(ctx context.Context, max int) (int, error) {
	if max <= 0 {
		return 0, nil
	}
	ch, err := c.channel(ctx)
	if err != nil {
		return 0, err
	}
	// Closing returns every message taken but not moved to the dead-letter queue.
	defer ch.Close()
	if err := ch.Confirm(false); err != nil {
		return 0, fmt.Errorf("bus: replay: confirm mode: %w", err)
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, 1))
	dlq := c.names.deadLetterQ()
	moved, kept := 0, 0
	for moved < max {
		d, ok, err := ch.Get(dlq, false)
		if err != nil {
			return moved, fmt.Errorf("bus: replay: get: %w", err)
		}
		if !ok {
			break
		}
		queue, key := deadLetterOrigin(d)
		log := c.log.With("message_id", d.MessageId, "queue", queue, "routing_key", key)
		if queue == "" {
			log.WarnContext(ctx, "bus replay: dead letter names no queue; kept")
			kept++
			continue // left unacknowledged, so it stays
		}
		headers := userHeaders(d.Headers)
		headers[hdrRoutingKey] = key
		// The original publisher again, so the consumer judges the message as it first did;
		// the broker lets only a user with the impersonator tag (the operator's) do this.
		publisher, _ := d.Headers[hdrPublisher].(string)
		if publisher == "" {
			publisher = d.UserId // dead-lettered by the broker itself: properties kept
		}
		// Mandatory: a queue that no longer exists returns the message instead of dropping it.
		dc, err := ch.PublishWithDeferredConfirmWithContext(ctx, "", queue, true, false, amqp.Publishing{
			DeliveryMode: amqp.Persistent,
			ContentType:  d.ContentType,
			MessageId:    d.MessageId,
			UserId:       publisher,
			Type:         d.Type,
			Timestamp:    d.Timestamp,
			Headers:      headers,
			Body:         d.Body,
		})
		if err != nil {
			return moved, fmt.Errorf("bus: replay: publish: %w", err)
		}
		acked, err := dc.WaitContext(ctx)
		if err != nil {
			return moved, err
		}
		// The broker sends basic.return before the confirm, so a return is already here.
		select {
		case _, open := <-returns:
			if !open {
				// The broker closed the channel: most likely it refused the user_id
				// (replaying needs the impersonator tag); the message stays parked.
				return moved, fmt.Errorf("bus: replay: channel closed by the broker (does this user have the impersonator tag?): %w", ErrClosed)
			}
			log.WarnContext(ctx, "bus replay: queue does not exist; kept")
			kept++
			continue
		default:
		}
		if !acked {
			return moved, fmt.Errorf("bus: replay: broker nacked message %s", d.MessageId)
		}
		if err := d.Ack(false); err != nil {
			return moved, fmt.Errorf("bus: replay: ack: %w", err)
		}
		moved++
		log.InfoContext(ctx, "bus dead letter replayed")
	}
	if kept > 0 {
		c.log.WarnContext(ctx, "bus replay left messages in the dead-letter queue", "kept", kept)
	}
	return moved, nil
}

// deadLetterOrigin finds the queue and routing key a dead letter came from: our headers, or
// the broker's x-death record for one it dead-lettered itself (delivery limit).
func deadLetterOrigin(d amqp.Delivery) (queue, key string) {
	queue, _ = d.Headers[hdrQueue].(string)
	key, _ = d.Headers[hdrRoutingKey].(string)
	if deaths, ok := d.Headers["x-death"].([]any); ok && len(deaths) > 0 {
		if death, ok := deaths[0].(amqp.Table); ok {
			if queue == "" {
				queue, _ = death["queue"].(string)
			}
			if keys, ok := death["routing-keys"].([]any); ok && len(keys) > 0 && key == "" {
				key, _ = keys[0].(string)
			}
		}
	}
	if key == "" {
		key = d.RoutingKey
	}
	return queue, key
}
