package pooler

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"tori.dev/pkg/testinfra"
	"tori.dev/services/zoneagent/internal/managed"
)

// clientScript is an app's process on the host side, as pasta's sockets are: it runs as the
// app's uid. "hold N" opens N bare connections to the pooler, prints how many it holds and
// how many were refused, and keeps them until its stdin closes; "login USER DB" sends a
// startup message and prints the first byte of the answer: R (the pooler asks for the
// password: admitted) or E (an error, such as max_client_conn).
const clientScript = `import socket, struct, sys
host, port = sys.argv[1], int(sys.argv[2])
if sys.argv[3] == "hold":
    held, refused = [], 0
    for _ in range(int(sys.argv[4])):
        s = socket.socket()
        s.settimeout(10)  # a connect nobody answers counts as refused, not a hung test
        try:
            s.connect((host, port)); held.append(s)
        except OSError:
            refused += 1; s.close()
    print(len(held), refused, flush=True)
    sys.stdin.read()
else:
    s = socket.create_connection((host, port), timeout=10)
    body = b"user\0" + sys.argv[4].encode() + b"\0database\0" + sys.argv[5].encode() + b"\0\0"
    s.sendall(struct.pack("!ii", 8 + len(body), 196608) + body)
    print(s.recv(1).decode(errors="replace") or "closed", flush=True)
`

func asUID(uid uint32, args ...string) *exec.Cmd {
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c", clientScript}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	return cmd
}

// One app holding 2,000 connections to the pooler (all its cap allows) refuses no other
// app: a second app still logs in, and the first is refused past its cap, also after the
// caps are rewritten for a database made meanwhile. Real nftables (a table of the test's own,
// matching only its pooler's port), real PgBouncer, the zone cluster.
func TestClientCapsKeepOneAppFromStarvingAnother(t *testing.T) {
	ctx := context.Background()
	c := managed.Cluster{AdminURL: testinfra.ZoneProvisionerURL(t), Access: managed.HBAKeeper{SuperURL: testinfra.ZonePostgresSuperURL(t)}, StatementTimeout: time.Minute}
	p := startPooler(t, 2*time.Second)
	heavy, light := newName(), newName()
	heavyApp, lightApp := uuid.NewString(), uuid.NewString()
	// 200 server connections make a cap of 2,000 clients; 5 make 50.
	for _, db := range []struct {
		name, app string
		pool      int
	}{{heavy, heavyApp, 200}, {light, lightApp, 5}} {
		if err := c.Create(ctx, db.name, "pw", db.pool, 1<<28); err != nil {
			t.Fatal(err)
		}
		if err := p.Admit(ctx, db.name, "pw", db.pool); err != nil {
			t.Fatal(err)
		}
		if err := p.Track(db.name, uuid.NewString(), db.app, 1<<28); err != nil {
			t.Fatal(err)
		}
	}
	const lo = 390000
	heavyUID, lightUID := uint32(lo+1), uint32(lo+2)
	caps := managed.ClientCaps{Nft: "nft", Table: fmt.Sprintf("tori_t%d_pooler", rand.IntN(1<<30)), Pooler: p.Listen, UIDLo: lo, UIDHi: lo + 99}
	if err := caps.Init(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caps.Remove() })
	pools := p.AppPools()
	want := map[uint32]int{heavyUID: managed.ClientCap(pools[heavyApp]...), lightUID: managed.ClientCap(pools[lightApp]...)}
	if want[heavyUID] != 2000 || want[lightUID] != 50 {
		t.Fatalf("caps %v", want)
	}
	if err := caps.Sync(want); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	maxClients := p.maxClients()
	p.mu.Unlock()
	if maxClients < 2000+50+managed.OtherAppsClients {
		t.Fatalf("max_client_conn %d does not fit the caps", maxClients)
	}

	host, port, _ := strings.Cut(p.Listen, ":")
	// The first app asks for more than its cap; the second holds some of its own too.
	if held, refused := holdAs(t, heavyUID, host, port, 2100); held != 2000 || refused != 100 {
		t.Fatalf("the first app holds %d connections and was refused %d; want 2000 and 100", held, refused)
	}
	if held, refused := holdAs(t, lightUID, host, port, 40); held != 40 || refused != 0 {
		t.Fatalf("the second app holds %d connections and was refused %d; want 40 and 0", held, refused)
	}

	// Connected is not yet accepted: wait until PgBouncer counts every one as its client.
	testinfra.Eventually(t, 90*time.Second, "the pooler counts 2,040 clients", func() bool { return poolerClients(t, p) >= 2040 })

	login := func(uid uint32, user, db string) string {
		t.Helper()
		b, err := asUID(uid, host, port, "login", user, db).Output()
		if err != nil {
			t.Fatalf("login as uid %d: %v", uid, err)
		}
		return strings.TrimSpace(string(b))
	}
	if got := login(lightUID, light, light); got != "R" {
		t.Fatalf("the second app's login while the first holds 2,000: %q, want R (asked for its password)", got)
	}
	// A database made elsewhere rewrites the map; the first app's count stays.
	want[lo+3] = managed.ClientCap(20)
	if err := caps.Sync(want); err != nil {
		t.Fatal(err)
	}
	if out, err := asUID(heavyUID, host, port, "login", heavy, heavy).CombinedOutput(); err == nil {
		t.Fatalf("the first app past its cap after a rewrite: %s", out)
	}
	if got := login(lightUID, light, light); got != "R" {
		t.Fatalf("the second app after the rewrite: %q", got)
	}
	// An app the zone knows no database of gets the others' cap.
	if held, refused := holdAs(t, lo+4, host, port, 60); held != managed.OtherAppClients || refused != 60-managed.OtherAppClients {
		t.Fatalf("an app without a database holds %d and was refused %d", held, refused)
	}
}

// holdAs opens n bare connections to the pooler as uid and keeps them until the test ends;
// it returns how many it holds and how many were refused.
func holdAs(t *testing.T, uid uint32, host, port string, n int) (held, refused int) {
	t.Helper()
	hold := asUID(uid, host, port, "hold", fmt.Sprint(n))
	stdin, err := hold.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := hold.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hold.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); _ = hold.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Sscan(line, &held, &refused); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return held, refused
}

// poolerClients is how many clients PgBouncer has (SHOW LISTS, used_clients).
func poolerClients(t *testing.T, p *Pooler) int {
	t.Helper()
	ctx := context.Background()
	conn, err := p.admin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SHOW LISTS")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var list string
		var n int
		if err := rows.Scan(&list, &n); err != nil {
			t.Fatal(err)
		}
		if list == "used_clients" {
			return n
		}
	}
	t.Fatal("SHOW LISTS has no used_clients")
	return 0
}
