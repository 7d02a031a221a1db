package bus_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"tori.dev/pkg/pgstore"
)

// BenchmarkBurstFloor runs only the statements BenchmarkOutboxToConsumer/burst's workload
// itself makes, with no relay, broker or consumer bookkeeping (`make bench-bus` runs both):
// two publishers commit bus.Publish in transactions of 100, and meanwhile four writers
// insert one effect row per event in transactions of 100, as the burst's handler does. Its
// events/s is a ceiling for the burst on this machine, and the CPU it prints per event,
// taken from the machine's budget at a given rate (two cores at 10,000 events/s: 200 µs an
// event), is what the relay, the broker and the consumer have left to spend.
func BenchmarkBurstFloor(b *testing.B) {
	ctx := context.Background()
	pool := newPool(b)
	n := b.N
	const publishers, writers, perTx = 2, 4, 100

	before := readMachineCPU(b)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, publishers+writers)
	for p := range publishers {
		from, to := p*n/publishers, (p+1)*n/publishers
		wg.Go(func() { errs <- publishEvents(ctx, pool, "test.bench.event", from, to-from, perTx) })
	}
	for w := range writers {
		from, to := w*n/writers, (w+1)*n/writers
		wg.Go(func() { errs <- insertEffects(ctx, pool, from, to, perTx) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	used := readMachineCPU(b)
	rate := float64(n) / elapsed.Seconds()
	b.ReportMetric(rate, "events/s")
	b.ReportMetric(0, "ns/op")
	if n > 1 {
		fmt.Printf("%s: %d events in %s: %.0f events/s; %s\n",
			b.Name(), n, elapsed.Round(time.Millisecond), rate, used.perEvent(before, n))
	}
}

// insertEffects writes the burst handler's effect rows for seqs [from, to), perTx a commit.
func insertEffects(ctx context.Context, pool pgstore.Beginner, from, to, perTx int) error {
	for start := from; start < to; start += perTx {
		err := pgstore.InTx(ctx, pool, func(tx pgx.Tx) error {
			for seq := start; seq < min(start+perTx, to); seq++ {
				if _, err := tx.Exec(ctx, `INSERT INTO effects (consumer, seq, message_id) VALUES ('floor', $1, $2)`,
					seq, fmt.Sprintf("floor-%d", seq)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// selfCPU is the CPU time this process has used, user and system.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// machineCPU is the CPU time used so far by this process, by Postgres and by RabbitMQ, as
// far as this machine can tell.
type machineCPU struct{ self, postgres, broker time.Duration }

func readMachineCPU(b *testing.B) machineCPU {
	return machineCPU{self: selfCPU(b), postgres: commandCPU("postgres"), broker: commandCPU("beam.smp")}
}

// perEvent prints what each used since before, per event.
func (after machineCPU) perEvent(before machineCPU, n int) string {
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	return fmt.Sprintf("CPU per event: this process %.0f µs, Postgres %.0f µs, RabbitMQ %.0f µs",
		us(after.self-before.self), us(after.postgres-before.postgres), us(after.broker-before.broker))
}

// commandCPU is the CPU time of every process named command on this machine, including its
// children that have exited (Postgres's backends are counted in the postmaster's children's
// time); 0 where /proc cannot tell (not Linux, or the server runs elsewhere).
func commandCPU(command string) time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks int64
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		// pid (comm) state ppid … : comm may hold spaces, so split after its ')'.
		s := string(raw)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != command {
			continue
		}
		f := strings.Fields(s[end+1:])
		// Fields from the state on: utime, stime, cutime, cstime are fields 14–17 of stat.
		for _, i := range []int{11, 12, 13, 14} {
			if i < len(f) {
				v, _ := strconv.ParseInt(f[i], 10, 64)
				ticks += v
			}
		}
	}
	// USER_HZ is 100 on every Linux this runs on.
	return time.Duration(ticks) * 10 * time.Millisecond
}
