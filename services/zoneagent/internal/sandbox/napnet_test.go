package sandbox

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A napping app keeps no process: its network namespace (holder and pasta) is released once
// none of its sandboxes runs in it, never under one that does, and the app's next start
// makes it anew. The agent keeps none of its descriptors either.
func TestAnIdleNetworkIsReleasedAndMadeAnew(t *testing.T) {
	sb, app, dir := instanceApp(t, testUIDBase+984)
	fdsBefore := openFDs()
	p := startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "web.1"}, "echo ready; exec sleep 60")
	netLeaf := sb.Cgroups.LeafDir("pids", app, NetLeaf)
	held := procsIn(netLeaf)
	if len(held) < 2 {
		t.Fatalf("the network's holder and pasta are not in its leaf: %v", held)
	}
	if sb.ReleaseIdleNetwork(app) || !sb.HoldsNetwork(app) {
		t.Fatal("the network was released under a running sandbox")
	}
	if got := procsIn(netLeaf); !slices.Equal(got, held) {
		t.Fatalf("the network's processes changed under a running sandbox: %v, were %v", got, held)
	}

	p.Kill()
	if !sb.ReleaseIdleNetwork(app) || sb.HoldsNetwork(app) {
		t.Fatal("the network of an app with no sandbox left was kept")
	}
	if left := procsIn(netLeaf); len(left) > 0 {
		t.Fatalf("the released network left processes: %v", left)
	}
	for _, pid := range held {
		// A zombie (the namespace's first process, reparented to init when bwrap died
		// first) holds no memory: only its reaping by init is left.
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if _, state, _ := strings.Cut(string(stat), ") "); err == nil && !strings.HasPrefix(state, "Z") {
			t.Fatalf("process %d of the released network still runs: %s", pid, stat)
		}
	}
	if fds := openFDs(); fds > fdsBefore {
		t.Fatalf("the agent holds %d descriptors more than before the app started", fds-fdsBefore)
	}
	if sb.ReleaseIdleNetwork(app) {
		t.Fatal("released twice")
	}

	// The next start (a wake) makes the network anew, with a port to serve on.
	if _, err := sb.FreePort(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	startReady(t, sb, Spec{AppID: app, Dir: dir, Instance: "web.1"}, "echo ready; exec sleep 60")
	again := procsIn(netLeaf)
	if len(again) < 2 || !sb.HoldsNetwork(app) {
		t.Fatalf("the wake made no network: %v", again)
	}
}

// Making one app's network does not hold up another's: each wake after a nap makes its
// app's network, and wakes of different apps must not queue behind each other.
func TestOneAppsNetworkMakingDoesNotWaitForAnothers(t *testing.T) {
	sb, busy, _ := instanceApp(t, testUIDBase+986)
	_, other, _ := instanceApp(t, testUIDBase+987)
	sl := sb.lockSlot(busy) // as a making of busy's network under way does
	defer sl.mu.Unlock()
	made := make(chan error, 1)
	go func() {
		_, err := sb.FreePort(context.Background(), other)
		made <- err
	}()
	select {
	case err := <-made:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("another app's network waited for this one's making")
	}
	if !sb.HoldsNetwork(other) || sb.HoldsNetwork(busy) {
		t.Fatalf("held: other %v, busy %v", sb.HoldsNetwork(other), sb.HoldsNetwork(busy))
	}
}

// Networks are made a bounded number at once (networksAtOnce): with every turn taken, an
// app's network waits for one, gives up with its request, and nothing of it is made; once a
// turn is free it is made.
func TestNetworksAreMadeInTurns(t *testing.T) {
	sb, app, _ := instanceApp(t, testUIDBase+988)
	if cap(sb.ids.making) != networksAtOnce() {
		t.Fatalf("%d turns, want %d", cap(sb.ids.making), networksAtOnce())
	}
	for range cap(sb.ids.making) {
		sb.ids.making <- struct{}{} // as networks being made by as many wakes do
	}
	t.Cleanup(func() {
		for len(sb.ids.making) > 0 {
			<-sb.ids.making
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := sb.FreePort(ctx, app); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with every turn taken: %v, want the request's deadline", err)
	}
	if sb.HoldsNetwork(app) || len(procsIn(sb.Cgroups.LeafDir("pids", app, NetLeaf))) > 0 {
		t.Fatal("a network was made without a turn")
	}

	<-sb.ids.making // one network made
	if _, err := sb.FreePort(context.Background(), app); err != nil {
		t.Fatal(err)
	}
	if !sb.HoldsNetwork(app) {
		t.Fatal("no network made with a turn free")
	}
	if got := len(sb.ids.making); got != cap(sb.ids.making)-1 {
		t.Fatalf("%d turns taken after the making, want its turn given back (%d)", got, cap(sb.ids.making)-1)
	}
}
