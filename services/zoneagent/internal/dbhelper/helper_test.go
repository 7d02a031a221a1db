package dbhelper

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"tori.dev/services/zoneagent/internal/managed"
)

const testName = "db_0123456789abcdef0123456789abcdef"

func testSteps() *Steps {
	return &Steps{TablespaceOwner: "zone_prov", ClientCaps: &managed.ClientCaps{UIDLo: 200001, UIDHi: 299999}}
}

// Each step takes exactly its arguments: a database's name (db_ and 32 hex digits, so no
// path can be spelled), a bounded size, the zone's own provisioning role, uids of the zone's
// apps; anything else is refused before any step runs.
func TestHelperChecksEveryArgument(t *testing.T) {
	s := testSteps()
	good := []Request{
		{Op: OpPing}, {Op: OpCheckpoint}, {Op: OpAccess},
		{Op: OpEnsure, Name: testName, Bytes: 1 << 28, Owner: "zone_prov"},
		{Op: OpRemount, Name: testName, Bytes: 1 << 28}, {Op: OpTend, Name: testName, Bytes: 1}, {Op: OpWatch, Name: testName, Bytes: MaxCapBytes},
		{Op: OpDropRes, Name: testName}, {Op: OpRelease, Name: testName},
		{Op: OpClientCaps}, {Op: OpClientCaps, Caps: []ClientCap{{UID: 200001, Max: 12}, {UID: 299999, Max: MaxClientCap}}},
	}
	for _, r := range good {
		if err := s.Check(r); err != nil {
			t.Errorf("%+v refused: %v", r, err)
		}
	}
	bad := map[string]Request{
		"unknown step":           {Op: "mount", Name: testName, Bytes: 1},
		"no step":                {},
		"a path for a name":      {Op: OpRelease, Name: "../../etc"},
		"a name with a path":     {Op: OpRelease, Name: testName + "/../../x"},
		"another database":       {Op: OpRelease, Name: "postgres"},
		"upper-case hex":         {Op: OpRelease, Name: strings.ToUpper(testName)},
		"short name":             {Op: OpRelease, Name: "db_0123"},
		"no size":                {Op: OpEnsure, Name: testName, Owner: "zone_prov"},
		"negative size":          {Op: OpTend, Name: testName, Bytes: -1},
		"size past the bound":    {Op: OpRemount, Name: testName, Bytes: MaxCapBytes + 1},
		"another owner":          {Op: OpEnsure, Name: testName, Bytes: 1 << 28, Owner: "postgres"},
		"no owner":               {Op: OpEnsure, Name: testName, Bytes: 1 << 28},
		"an owner where none":    {Op: OpRelease, Name: testName, Owner: "zone_prov"},
		"a size where none":      {Op: OpRelease, Name: testName, Bytes: 1},
		"a name where none":      {Op: OpCheckpoint, Name: testName},
		"caps where none":        {Op: OpAccess, Caps: []ClientCap{{UID: 200001, Max: 1}}},
		"a uid outside the zone": {Op: OpClientCaps, Caps: []ClientCap{{UID: 0, Max: 1}}},
		"a uid past the zone":    {Op: OpClientCaps, Caps: []ClientCap{{UID: 300000, Max: 1}}},
		"a uid twice":            {Op: OpClientCaps, Caps: []ClientCap{{UID: 200001, Max: 1}, {UID: 200001, Max: 2}}},
		"no cap":                 {Op: OpClientCaps, Caps: []ClientCap{{UID: 200001}}},
		"a cap past the bound":   {Op: OpClientCaps, Caps: []ClientCap{{UID: 200001, Max: MaxClientCap + 1}}},
	}
	for why, r := range bad {
		if err := s.Check(r); !errors.Is(err, errBadArguments) {
			t.Errorf("%s (%+v) not refused: %v", why, r, err)
		}
	}
	// Without caps on this host there is no caps step at all.
	if err := (&Steps{TablespaceOwner: "zone_prov"}).Check(Request{Op: OpClientCaps}); err == nil {
		t.Error("a caps request accepted by a helper without caps")
	}
}

// startServer serves s on a socket of the test's own.
func startServer(t *testing.T, srv *Server) Client {
	t.Helper()
	path := filepath.Join(t.TempDir(), "helper.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return Client{Socket: path}
}

// The helper answers only its own database host: the user's uid and the pid it started.
// Another process of the same user (a second zone's host), a process of another user, or
// any process before a host is admitted gets no answer; nor does a request it does not take.
func TestHelperAnswersItsOwnHostAlone(t *testing.T) {
	srv := &Server{UID: uint32(os.Getuid()), Steps: testSteps(), Log: slog.New(slog.DiscardHandler)}
	c := startServer(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, _, err := c.Ping(ctx); !errors.Is(err, ErrRefused) {
		t.Fatalf("before any host is admitted: %v", err)
	}
	srv.Admit(os.Getpid() + 1) // another process of the same user
	if _, _, err := c.Ping(ctx); !errors.Is(err, ErrRefused) {
		t.Fatalf("another pid of the host's user: %v", err)
	}
	srv.Admit(os.Getpid())
	ceilings, caps, err := c.Ping(ctx)
	if err != nil || ceilings || !caps {
		t.Fatalf("the admitted host's ping: ceilings %v caps %v err %v", ceilings, caps, err)
	}
	if err := c.Release(strings.Replace(testName, "db_", "../", 1)); !errors.Is(err, ErrRefused) {
		t.Fatalf("a bad name from the admitted host: %v", err)
	}
	// Unknown fields are refused whole, not ignored.
	conn, err := net.Dial("unix", c.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(`{"op":"ping","path":"/etc"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, 256)
	n, _ := conn.Read(reply)
	if !strings.Contains(string(reply[:n]), ErrRefused.Error()) {
		t.Fatalf("a request with an unknown field: %q", reply[:n])
	}

	other := &Server{UID: uint32(os.Getuid()) + 1, Steps: testSteps(), Log: slog.New(slog.DiscardHandler)}
	other.Admit(os.Getpid()) // the right pid, another user
	if _, _, err := startServer(t, other).Ping(ctx); !errors.Is(err, ErrRefused) {
		t.Fatalf("a process of another user: %v", err)
	}
}

// A step the host has no means for (no ceilings here) fails as such, and a pg_hba.conf that
// is not the zone's comes back as managed.ErrAccessUnmanaged, which the host tells apart.
func TestHelperStepOutcomes(t *testing.T) {
	srv := &Server{UID: uint32(os.Getuid()), Steps: testSteps(), Log: slog.New(slog.DiscardHandler)}
	c := startServer(t, srv)
	srv.Admit(os.Getpid())
	ctx := context.Background()
	if err := c.Ensure(ctx, testName, 1<<28, "zone_prov"); err == nil || errors.Is(err, ErrRefused) {
		t.Fatalf("ensure without ceilings: %v", err)
	}
	if err := c.KeepAccess(ctx); !errors.Is(err, managed.ErrAccessUnmanaged) {
		t.Fatalf("access without a keeper: %v", err)
	}
}

// A request past the bound is not read whole.
func TestHelperBoundsARequest(t *testing.T) {
	big := `{"op":"client-caps","caps":[` + strings.Repeat(`{"uid":200001,"max":1},`, maxRequestBytes/20) + `{"uid":200002,"max":1}]}`
	if _, err := readRequest(strings.NewReader(big)); err == nil {
		t.Fatal("a request past the bound was read")
	}
}
