package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	amqp "github.com/rabbitmq/amqp091-go"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
)

// Request/reply never touches a durable queue or disk: requests and replies are transient,
// the request queue is non-durable, and replies travel over RabbitMQ's direct reply-to, which
// has no queue at all. That is what lets a reply carry a plaintext secret.

const (
	directReplyTo   = "amq.rabbitmq.reply-to"
	hdrErrorCode    = "x-tori-error-code"
	hdrErrorMessage = "x-tori-error-message"

	// serveConcurrency is how many requests one Serve answers at once.
	serveConcurrency = 16
)

// Serve answers requests sent to queue until ctx ends. An error built with Reject reaches the
// caller as a *RemoteError with its code; any other error as code "internal".
func (c *Conn) Serve(ctx context.Context, queue string, handle Responder) error {
	if queue == "" || handle == nil {
		return errors.New("bus: serve: queue and handle are required")
	}
	name := c.names.queue(queue)
	log := c.log.With("serve", name)
	return c.keep(ctx, log, func(ctx context.Context, ch *amqp.Channel) error {
		// Non-durable and not auto-delete: it survives its consumers coming and going (a
		// redeploy) but not a broker restart, and holds nothing on disk.
		if _, err := ch.QueueDeclare(name, false, false, false, false, c.transientArgs()); err != nil {
			return fmt.Errorf("bus: declare queue %s: %w", name, err)
		}
		if err := ch.Qos(serveConcurrency, 0, false); err != nil {
			return fmt.Errorf("bus: qos: %w", err)
		}
		deliveries, err := ch.Consume(name, "", false, false, false, false, nil)
		if err != nil {
			return fmt.Errorf("bus: consume %s: %w", name, err)
		}
		closed := ch.NotifyClose(make(chan *amqp.Error, 1))
		log.InfoContext(ctx, "bus server subscribed")
		var wg sync.WaitGroup
		for range serveConcurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for d := range deliveries {
					c.answer(ctx, ch, name, d, handle)
				}
			}()
		}
		var end error
		select {
		case <-ctx.Done():
		case e, ok := <-closed:
			end = closeErr(e, ok)
		}
		ch.Close()
		wg.Wait()
		return end
	})
}

func (c *Conn) answer(ctx context.Context, ch *amqp.Channel, queue string, d amqp.Delivery, handle Responder) {
	// Acknowledged whatever happens: a request is answered at most once, never redelivered.
	defer d.Ack(false)
	log := c.log.With("serve", queue, "message_id", d.MessageId)
	if d.ReplyTo == "" {
		log.WarnContext(ctx, "bus request without reply-to; dropped")
		return
	}
	rctx := extractTable(ctx, d.Headers)
	rctx, span := startSpan(rctx, "serve "+queue, trace.SpanKindServer, queue, d.MessageId)
	defer span.End()
	// The requester stops waiting when its message expires; so can the responder.
	if ms, err := strconv.ParseInt(d.Expiration, 10, 64); err == nil && ms > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	reply := amqp.Publishing{
		DeliveryMode:  amqp.Transient,
		CorrelationId: d.CorrelationId,
		UserId:        c.user,
		Headers:       amqp.Table{},
	}
	publisher := publisherOf(d.UserId)
	var msg proto.Message
	var err error
	if c.mayAsk(publisher) {
		msg, err = callResponder(rctx, handle, Delivery{ID: d.MessageId, RoutingKey: queue, Type: d.Type, Body: d.Body, Attempt: 1, Publisher: publisher})
	} else {
		log.WarnContext(rctx, "bus request from no principal refused", "user_id", d.UserId)
		err = Reject(CodeForbidden, "requests are answered only for the control plane's principals")
	}
	var body []byte
	if err == nil && msg != nil {
		body, err = proto.Marshal(msg)
		reply.Type = string(msg.ProtoReflect().Descriptor().FullName())
		reply.ContentType = "application/x-protobuf"
	}
	if err != nil {
		code, text := "internal", "internal error"
		var re *RemoteError
		if errors.As(err, &re) {
			code, text = re.Code, re.Message
		} else {
			// The cause stays here, in our log; the caller learns only that it failed.
			span.RecordError(err)
			span.SetStatus(codes.Error, "internal")
			log.ErrorContext(rctx, "bus responder failed", "err", err)
		}
		reply.Headers[hdrErrorCode] = code
		reply.Headers[hdrErrorMessage] = text
		body = nil
		reply.Type = ""
	}
	reply.Body = body
	if err := ch.Publish("", d.ReplyTo, false, false, reply); err != nil {
		log.WarnContext(rctx, "bus reply not sent", "err", err)
	}
}

func callResponder(ctx context.Context, h Responder, d Delivery) (m proto.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("bus: responder panicked: %v", p)
		}
	}()
	return h(ctx, d)
}

// Request sends req to queue and decodes the answer into reply. It gives up with ErrTimeout at
// ctx's deadline or after Config.RequestTimeout, whichever is first.
//
// It returns ErrNoResponder when the queue does not exist, and an error (not ErrTimeout)
// when the connection drops while waiting: the request may or may not have been answered.
func (c *Conn) Request(ctx context.Context, queue string, req, reply proto.Message) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	body, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("bus: request %s: marshal: %w", queue, err)
	}
	name := c.names.queue(queue)
	id := uuid.NewString()
	ctx, span := startSpan(ctx, "request "+queue, trace.SpanKindClient, name, id)
	defer span.End()
	headers := amqp.Table{}
	injectTable(ctx, headers)

	err = c.rpc.roundTrip(ctx, name, id, amqp.Publishing{
		DeliveryMode:  amqp.Transient,
		ContentType:   "application/x-protobuf",
		MessageId:     id,
		CorrelationId: id,
		UserId:        c.user,
		ReplyTo:       directReplyTo,
		Type:          string(req.ProtoReflect().Descriptor().FullName()),
		Headers:       headers,
		Body:          body,
	}, reply)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "request failed")
	}
	return err
}

// requester owns the channel that consumes direct replies. RabbitMQ requires the request to be
// published on the channel that consumes amq.rabbitmq.reply-to, so every Request shares that
// one channel (amqp091 serialises publishes on it) and a dispatcher hands each reply to its
// caller by correlation id.
type requester struct {
	c       *Conn
	opening chan struct{} // a one-slot lock that a waiter can abandon when its ctx ends

	mu    sync.Mutex
	ch    *amqp.Channel
	calls map[string]*call
}

type call struct {
	ch   *amqp.Channel
	done chan result // buffered: the dispatcher never blocks on a caller
}

type result struct {
	d        *amqp.Delivery
	returned bool // the broker could not route the request
	lost     bool // the channel died before a reply came
}

var errReplyLost = errors.New("bus: connection lost before the reply came")

func newRequester(c *Conn) *requester {
	return &requester{c: c, opening: make(chan struct{}, 1), calls: map[string]*call{}}
}

func (r *requester) roundTrip(ctx context.Context, queue, id string, msg amqp.Publishing, reply proto.Message) error {
	for {
		ch, err := r.channel(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, ErrClosed) {
				return requestErr(ctx, err)
			}
			// Most likely the connection dropped while the channel was opening.
			if !sleepCtx(ctx, 50*time.Millisecond) {
				return requestErr(ctx, ctx.Err())
			}
			continue
		}
		deadline, _ := ctx.Deadline()
		ttl := time.Until(deadline).Milliseconds()
		if ttl < 1 {
			return ErrTimeout
		}
		// The broker drops a request nobody took in time, so a late responder does not work
		// for a caller that has gone.
		msg.Expiration = strconv.FormatInt(ttl, 10)
		cl := r.register(id, ch)
		if ch.IsClosed() {
			// Closed before we registered: the dispatcher may have failed its calls already
			// and would never fail ours.
			r.unregister(id)
			continue
		}
		if err := ch.PublishWithContext(ctx, "", queue, true, false, msg); err != nil {
			r.unregister(id)
			if ctx.Err() != nil {
				return requestErr(ctx, ctx.Err())
			}
			// The channel failed under us before the request left: safe to send it again
			// once a channel is back.
			if !sleepCtx(ctx, 20*time.Millisecond) {
				return requestErr(ctx, ctx.Err())
			}
			continue
		}
		select {
		case res := <-cl.done:
			if res.lost && r.c.isClosing() {
				return ErrClosed
			}
			return decodeReply(res, reply)
		case <-ctx.Done():
			r.unregister(id)
			return requestErr(ctx, ctx.Err())
		}
	}
}

func decodeReply(res result, reply proto.Message) error {
	switch {
	case res.returned:
		return ErrNoResponder
	case res.lost:
		return errReplyLost
	}
	if code, ok := res.d.Headers[hdrErrorCode].(string); ok {
		text, _ := res.d.Headers[hdrErrorMessage].(string)
		return &RemoteError{Code: code, Message: text}
	}
	if err := proto.Unmarshal(res.d.Body, reply); err != nil {
		return fmt.Errorf("bus: decode reply: %w", err)
	}
	return nil
}

func requestErr(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return err
}

func (r *requester) register(id string, ch *amqp.Channel) *call {
	cl := &call{ch: ch, done: make(chan result, 1)}
	r.mu.Lock()
	r.calls[id] = cl
	r.mu.Unlock()
	return cl
}

func (r *requester) unregister(id string) {
	r.mu.Lock()
	delete(r.calls, id)
	r.mu.Unlock()
}

func (r *requester) resolve(id string, res result) {
	r.mu.Lock()
	cl, ok := r.calls[id]
	delete(r.calls, id)
	r.mu.Unlock()
	if ok {
		cl.done <- res
	}
}

// channel returns the reply channel, opening it (and its consumer) when there is none.
func (r *requester) channel(ctx context.Context) (*amqp.Channel, error) {
	if ch := r.current(); ch != nil {
		return ch, nil
	}
	select {
	case r.opening <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-r.opening }()
	if ch := r.current(); ch != nil {
		return ch, nil
	}
	ch, err := r.c.channel(ctx)
	if err != nil {
		return nil, err
	}
	replies, err := ch.Consume(directReplyTo, "", true, false, false, false, nil)
	if err != nil {
		ch.Close()
		return nil, fmt.Errorf("bus: consume replies: %w", err)
	}
	returns := ch.NotifyReturn(make(chan amqp.Return, 16))
	r.mu.Lock()
	r.ch = ch
	r.mu.Unlock()
	go r.dispatch(ch, replies, returns)
	return ch, nil
}

func (r *requester) current() *amqp.Channel {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch != nil && !r.ch.IsClosed() {
		return r.ch
	}
	return nil
}

// dispatch hands replies and returned requests to their callers until ch closes, then fails
// the calls still waiting on ch: their replies can no longer arrive.
func (r *requester) dispatch(ch *amqp.Channel, replies <-chan amqp.Delivery, returns <-chan amqp.Return) {
	for replies != nil || returns != nil {
		select {
		case d, ok := <-replies:
			if !ok {
				replies = nil
				continue
			}
			r.resolve(d.CorrelationId, result{d: &d})
		case ret, ok := <-returns:
			if !ok {
				returns = nil
				continue
			}
			r.resolve(ret.CorrelationId, result{returned: true})
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ch == ch {
		r.ch = nil
	}
	for id, cl := range r.calls {
		if cl.ch == ch {
			delete(r.calls, id)
			cl.done <- result{lost: true}
		}
	}
}
