package edgelink

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"tori.dev/services/zoneagent/internal/edge"
)

// Bounds of the table feed.
const (
	// maxChange bounds one change's line (a full table of many thousand apps fits).
	maxChange = 64 << 20
	// maxAck bounds an ack line; the runtime reads nothing longer from its edge.
	maxAck = 64
	// AckTimeout is how long a table write waits for the edge's ack before it logs and
	// goes on (the edge may be stopping; the runtime then stops too).
	AckTimeout = 2 * time.Second
)

// change is one line of the feed: a numbered table change.
type change struct {
	Seq    uint64      `json:"seq"`
	Change edge.Change `json:"change"`
}

// ack is the edge's only line back: the number of the change it has applied.
type ack struct {
	Ack uint64 `json:"ack"`
}

// Feed is the runtime's end of the table feed (a socket pair with its edge process).
type Feed struct {
	conn net.Conn
	log  *slog.Logger
	acks chan uint64
	mu   sync.Mutex
	seq  uint64
	// unsure is set when a change may not have reached the edge (not sent, or no ack in
	// time): the table is sent whole again (Unsure, edge.Table.Resend), since the runtime
	// sends each change once and never the whole table on its own.
	unsure atomic.Bool
}

// Unsure reports, once, whether a change may have been lost since it was last asked.
func (f *Feed) Unsure() bool { return f.unsure.Swap(false) }

// NewFeed starts reading conn's acks.
func NewFeed(conn net.Conn, log *slog.Logger) *Feed {
	f := &Feed{conn: conn, log: log, acks: make(chan uint64, 16)}
	go f.readAcks()
	return f
}

// Send writes a change and waits for the edge to have applied it (at most AckTimeout):
// a switch the zone reports as live is one the edge serves.
func (f *Feed) Send(c edge.Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	line, err := json.Marshal(change{Seq: f.seq, Change: c})
	if err != nil {
		f.log.Error("table feed: change not encoded", "op", c.Op, "err", err.Error())
		f.unsure.Store(true)
		return
	}
	f.conn.SetWriteDeadline(time.Now().Add(AckTimeout))
	if _, err := f.conn.Write(append(line, '\n')); err != nil {
		f.log.Warn("table feed: change not sent to the edge", "op", c.Op, "err", err.Error())
		f.unsure.Store(true)
		return
	}
	timeout := time.NewTimer(AckTimeout)
	defer timeout.Stop()
	for {
		select {
		case n, ok := <-f.acks:
			if !ok {
				f.log.Warn("table feed: the edge closed the feed", "op", c.Op)
				f.unsure.Store(true)
				return
			}
			if n >= f.seq {
				return
			}
		case <-timeout.C:
			f.log.Warn("table feed: no ack from the edge in time", "op", c.Op, "timeout", AckTimeout)
			f.unsure.Store(true)
			return
		}
	}
}

// readAcks reads ack lines; anything else the edge writes is ignored (and a line past
// maxAck ends the feed's reading).
func (f *Feed) readAcks() {
	defer close(f.acks)
	r := bufio.NewReaderSize(f.conn, maxAck)
	for {
		line, err := readLine(r, maxAck)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				f.log.Warn("table feed: stopped reading the edge's acks", "err", err.Error())
			}
			return
		}
		var a ack
		if decodeLine(line, &a) != nil {
			continue
		}
		select {
		case f.acks <- a.Ack:
		default: // nobody waits: a late ack of a change that timed out
		}
	}
}

// Close ends the feed.
func (f *Feed) Close() error { return f.conn.Close() }

// Follow is the edge's end of the feed: it applies each change to table and acks it, calling
// received once the first (the runtime's full table) is in. It returns when the feed ends:
// the runtime is gone, and the edge must stop.
func Follow(ctx context.Context, conn net.Conn, table *edge.Table, received func()) error {
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	r := bufio.NewReaderSize(conn, 64<<10)
	first := true
	for {
		line, err := readLine(r, maxChange)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return errors.Join(errors.New("the runtime's table feed ended"), err)
		}
		var c change
		if err := json.Unmarshal(line, &c); err != nil {
			return errors.Join(errors.New("table feed: a change that does not decode"), err)
		}
		if err := table.Apply(c.Change); err != nil {
			return err
		}
		out, _ := json.Marshal(ack{Ack: c.Seq})
		if _, err := conn.Write(append(out, '\n')); err != nil {
			return err
		}
		if first {
			first = false
			received()
		}
	}
}
