package sandbox

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
)

// netSlot is an app's place among the kept networks. Its lock is held while the app's
// network is made or ended, and only the app's own starts wait for it: a wake of one app
// does not queue behind the tens of milliseconds another app's network takes to make.
type netSlot struct {
	mu  sync.Mutex
	net *appNet // under idCache.netMu; nil: none kept
}

// lockSlot is the app's netSlot, made on first use and returned locked. Kept while the app
// exists (a mutex and a pointer): ReleaseNetwork drops it with the app, and a start that
// waited on a dropped slot takes the app's new one.
func (s *Sandbox) lockSlot(appID string) *netSlot {
	for {
		s.ids.netMu.Lock()
		sl := s.ids.nets[appID]
		if sl == nil {
			if s.ids.nets == nil {
				s.ids.nets = map[string]*netSlot{}
			}
			sl = &netSlot{}
			s.ids.nets[appID] = sl
		}
		s.ids.netMu.Unlock()
		sl.mu.Lock()
		s.ids.netMu.Lock()
		current := s.ids.nets[appID] == sl
		s.ids.netMu.Unlock()
		if current {
			return sl
		}
		sl.mu.Unlock()
	}
}

// networksAtOnce is how many apps' networks are made at once: four per CPU, at least 8;
// the others wait their turn. Making one is mostly pasta's start, which zeroes ~20 MB of
// buffers (a page fault per page) and is given pastaConfigureTimeout to configure the
// namespace (network.go). Unbounded, the hundred wakes of a zone's restart, with the edge and
// the apps' runtimes starting beside them, shared two CPUs so many ways that most pastas
// missed their deadline (then 10 s) and their wakes failed together (a 2-core VM whose page
// faults are dear). Fewer at once is no faster: a network's making also waits (on the
// kernel, on pasta's pid file), and 100 networks took 8.6–9.1 s in all at 8 at once, 8.8 s
// unbounded, 10.9 s at 4 at once.
func networksAtOnce() int { return max(8, 4*runtime.NumCPU()) }

// useNetwork is the app's namespace, made on first use, after a release or when its holder
// has died, and counted as in use until leaveNetwork: a nap's release cannot end it under
// a start that is joining it.
func (s *Sandbox) useNetwork(ctx context.Context, appID string, cred *syscall.Credential) (*appNet, error) {
	sl := s.lockSlot(appID)
	defer sl.mu.Unlock()
	s.ids.netMu.Lock()
	n := sl.net
	if n != nil && n.alive() {
		n.users++
		s.ids.netMu.Unlock()
		return n, nil
	}
	sl.net = nil
	s.ids.netMu.Unlock()
	if n != nil {
		n.close()
	}
	select {
	case s.ids.making <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a turn to make the network: %w", ctx.Err())
	}
	n, err := s.makeNetwork(ctx, appID, cred)
	<-s.ids.making
	if err != nil {
		return nil, err
	}
	s.ids.netMu.Lock()
	sl.net = n
	n.users++
	s.ids.netMu.Unlock()
	return n, nil
}

// leaveNetwork ends one use of n that useNetwork counted.
func (s *Sandbox) leaveNetwork(n *appNet) {
	s.ids.netMu.Lock()
	n.users--
	s.ids.netMu.Unlock()
}

// ReleaseIdleNetwork ends the app's network namespace (holder and pasta) when none of the
// app's sandboxes runs in it: the app naps (its web stopped, and no worker, build or cron
// run of it left). A kept network is ~20 MB (pasta's buffers, BenchmarkNetworkMemory);
// the app's next start makes it anew, which adds its making (tens of ms,
// BenchmarkStartAfterNap) to the wake. It reports whether a network was ended.
func (s *Sandbox) ReleaseIdleNetwork(appID string) bool {
	if s.ids == nil {
		return false
	}
	s.ids.netMu.Lock()
	sl := s.ids.nets[appID]
	s.ids.netMu.Unlock()
	if sl == nil {
		return false
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	s.ids.netMu.Lock()
	n := sl.net
	if n == nil || n.users > 0 {
		s.ids.netMu.Unlock()
		return false
	}
	sl.net = nil
	s.ids.netMu.Unlock()
	n.close()
	return true
}

// HoldsNetwork reports whether the app's network namespace is kept (made and not released).
func (s *Sandbox) HoldsNetwork(appID string) bool {
	if s.ids == nil {
		return false
	}
	s.ids.netMu.Lock()
	defer s.ids.netMu.Unlock()
	sl := s.ids.nets[appID]
	return sl != nil && sl.net != nil
}

// ReleaseNetwork ends the app's network namespace, used or not, and forgets the app's slot
// (the app is deleted, or the agent stops).
func (s *Sandbox) ReleaseNetwork(appID string) {
	if s.ids == nil {
		return
	}
	s.ids.netMu.Lock()
	sl := s.ids.nets[appID]
	s.ids.netMu.Unlock()
	if sl == nil {
		return
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	s.ids.netMu.Lock()
	if s.ids.nets[appID] == sl {
		delete(s.ids.nets, appID)
	}
	n := sl.net
	sl.net = nil
	s.ids.netMu.Unlock()
	if n != nil {
		n.close()
	}
}

// ReleaseNetworks ends every app's network namespace.
func (s *Sandbox) ReleaseNetworks() {
	if s.ids == nil {
		return
	}
	s.ids.netMu.Lock()
	var ids []string
	for id := range s.ids.nets {
		ids = append(ids, id)
	}
	s.ids.netMu.Unlock()
	for _, id := range ids {
		s.ReleaseNetwork(id)
	}
}
