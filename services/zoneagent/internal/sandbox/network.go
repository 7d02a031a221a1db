package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// appNet is an app's network namespace, made on the app's first start and kept across its
// starts while it serves (a deploy, a crash, a restart): a holder process (a minimal
// bubblewrap sandbox as the app's uid running sleep) owns a user and a network namespace,
// and pasta, attached once, connects it to the pooler's port and the internet. Every
// sandbox of the app joins it (see Sandbox.Start), so a start pays for neither the
// namespace nor pasta's set-up. A napping app gives it back (ReleaseIdleNetwork): pasta
// alone holds ~20 MB of private memory (BenchmarkNetworkMemory), which a thousand napping
// apps cannot each keep.
type appNet struct {
	holder    *exec.Cmd
	done      chan struct{} // closed when the holder has exited
	pastaDone chan struct{} // closed when pasta has exited
	pastaPID  int
	// holderPID is the holder's first process in the namespaces (sleep), which nsenter
	// targets.
	holderPID int
	userNS    *os.File // the holder's namespaces: for pasta, and for the edge to dial in
	netNS     *os.File
	// users counts the sandboxes of the app running in the namespace and the starts about
	// to join it (under idCache.netMu): ReleaseIdleNetwork leaves a network in use.
	users int
}

// alive: the holder and pasta both run (without pasta the app would have no pooler and no
// internet: the next start makes the network anew).
func (n *appNet) alive() bool {
	select {
	case <-n.done:
		return false
	case <-n.pastaDone:
		return false
	default:
		return true
	}
}

// close ends pasta and the holder; the namespace goes with the last process in it.
func (n *appNet) close() {
	if n.pastaPID > 0 {
		_ = syscall.Kill(n.pastaPID, syscall.SIGKILL)
	}
	n.killHolder()
	<-n.done
	if n.pastaDone != nil {
		<-n.pastaDone
	}
	n.userNS.Close()
	n.netNS.Close()
}

// killHolder ends the holder: bwrap's process group and the namespace's first process, whose
// end ends every process of its pid namespace. The group alone is not enough: that process
// is in a session of its own (--new-session) and dies with bwrap only once it has asked to
// (--die-with-parent), which a kill during the namespace's set-up can come before.
func (n *appNet) killHolder() {
	_ = syscall.Kill(-n.holder.Process.Pid, syscall.SIGKILL)
	if n.holderPID > 0 {
		_ = syscall.Kill(n.holderPID, syscall.SIGKILL)
	}
}

func (s *Sandbox) makeNetwork(ctx context.Context, appID string, cred *syscall.Credential) (*appNet, error) {
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	secR, err := s.seccompFD()
	if err != nil {
		infoW.Close()
		return nil, err
	}
	id := strconv.FormatUint(uint64(cred.Uid), 10)
	args := []string{"--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--uid", id, "--gid", id, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--info-fd", "3", "--seccomp", "4"}
	args = append(append(args, s.holderMounts()...), "--", "/usr/bin/sleep", "infinity")
	cmd := hostCommand(s.Bwrap, args...)
	cmd.ExtraFiles = []*os.File{infoW, secR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// The namespace's processes share bwrap's stderr: should one outlive the kill, Wait
	// still returns (killHolder says why one could).
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	infoW.Close()
	secR.Close()
	if err != nil {
		return nil, err
	}
	n := &appNet{holder: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); close(n.done) }()
	fail := func(err error) (*appNet, error) {
		n.killHolder()
		<-n.done
		if n.userNS != nil {
			n.userNS.Close()
		}
		if n.netNS != nil {
			n.netNS.Close()
		}
		return nil, err
	}
	var info struct {
		ChildPID int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.ChildPID <= 0 {
		<-n.done
		return fail(fmt.Errorf("the network namespace did not start: %s", strings.TrimSpace(stderr.String())))
	}
	// Written by a process of the app's uid: checked to be the holder's own first process
	// (in namespaces of its own) before root moves it into a cgroup, hands its namespaces
	// to pasta or enters them.
	child, err := verifyChild(info.ChildPID, sandboxChild{bwrap: cmd.Process.Pid, uid: cred.Uid})
	if err != nil {
		return fail(err)
	}
	defer child.close()
	n.holderPID, n.netNS = child.pid, child.netNS
	for _, pid := range []int{cmd.Process.Pid, child.pid} {
		if err := s.Cgroups.Add(appID, NetLeaf, pid); err != nil {
			return fail(err)
		}
	}
	if n.userNS, err = os.Open(fmt.Sprintf("/proc/%d/ns/user", child.pid)); err != nil {
		return fail(err)
	}
	if !child.alive() {
		return fail(errors.New("the network namespace's holder ended during its set-up"))
	}
	if n.pastaPID, n.pastaDone, err = s.startPasta(ctx, cred, appID, n); err != nil {
		return fail(fmt.Errorf("network: %w", err))
	}
	return n, nil
}

// pastaConfigureTimeout bounds pasta's set-up of a namespace: a pasta that never writes its
// pid file fails its wake rather than holding it for the wake's two minutes. Under a zone
// restart's herd on a 2-core VM (100 wakes beside 9,000 sites' first TLS handshakes), a
// tenth of the pastas took over 10 s and their wakes failed, each retried from the start
// (scale bench run 8): the deadline is for a hung pasta, not a slow one.
const pastaConfigureTimeout = 30 * time.Second

// startPasta connects the app's network namespace: out, the pooler's port to the host's
// loopback and, through sockets pasta opens as the app's uid, the internet (the zone's
// nftables rules refuse those sockets the host's own addresses and private ranges). Nothing
// comes in through pasta: the edge reaches the app through dialIn. --no-map-gw: the gateway
// address is not the host. It returns pasta's pid once the namespace is configured.
func (s *Sandbox) startPasta(ctx context.Context, cred *syscall.Credential, appID string, n *appNet) (int, chan struct{}, error) {
	pidFile, err := os.CreateTemp("", "tori-pasta-*.pid")
	if err != nil {
		return 0, nil, err
	}
	pidPath := pidFile.Name()
	pidFile.Close()
	defer os.Remove(pidPath)
	if err := os.Chown(pidPath, int(cred.Uid), int(cred.Gid)); err != nil {
		return 0, nil, err
	}
	// In the foreground, as the agent's child: it dies with the agent (Pdeathsig), where a
	// daemon would outlive a crash holding the namespace. It writes its pid file once the
	// namespace is configured.
	args := []string{"--foreground", "--quiet", "--config-net", "--no-map-gw", "--ipv4-only",
		"--no-dhcp", "--no-ndp", "--no-ra", "--no-dhcpv6",
		"--pid", pidPath, "--userns", "/proc/self/fd/3", "--netns", "/proc/self/fd/4"}
	args = append(args, s.pastaPorts()...)
	cmd := hostCommand(s.Pasta, args...)
	cmd.ExtraFiles = []*os.File{n.userNS, n.netNS}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	exited := make(chan error, 1)
	done := make(chan struct{})
	go func() { exited <- cmd.Wait(); close(done) }()
	// Counted and killed with the app.
	_ = s.Cgroups.Add(appID, NetLeaf, cmd.Process.Pid)
	deadline := time.NewTimer(pastaConfigureTimeout)
	defer deadline.Stop()
	for {
		if b, err := os.ReadFile(pidPath); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return cmd.Process.Pid, done, nil
		}
		select {
		case err := <-exited:
			return 0, nil, fmt.Errorf("pasta: %v: %s", err, strings.TrimSpace(out.String()))
		case <-ctx.Done():
			cmd.Process.Kill()
			return 0, nil, ctx.Err()
		case <-deadline.C:
			cmd.Process.Kill()
			return 0, nil, fmt.Errorf("pasta did not configure the namespace within %s: %s", pastaConfigureTimeout, strings.TrimSpace(out.String()))
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// inNetNS runs f on a thread moved into the network namespace netns, so the sockets f makes
// belong to it. The thread moves back before it is used for anything else; if it cannot, it
// stays locked and Go ends it with the goroutine.
func inNetNS(netns *os.File, f func() error) error {
	home, err := agentNetNS()
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := setns(netns, syscall.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter the app's network: %w", err)
			return
		}
		err := f()
		// A thread that cannot go home stays locked, and so ends with this goroutine.
		if setns(home, syscall.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// agentNetNS is the agent's own network namespace, opened once: every thread is in it except
// for the moment one is in an app's, so each hop back needs no open of its own (the edge
// dials through here whenever it has no idle connection to an app).
var agentNetNS = sync.OnceValues(func() (*os.File, error) {
	return os.Open("/proc/self/ns/net")
})

func setns(f *os.File, kind int) error {
	return unix.Setns(int(f.Fd()), kind)
}

// loopback4 is 127.0.0.1 as a socket address.
var loopback4 = [4]byte{127, 0, 0, 1}

// dialIn connects to 127.0.0.1:port inside the app's network namespace: the edge's way in,
// with no port on the host at all. The dial runs on the thread in the namespace: its socket
// is made there, and the connection stays there once the thread moves back.
func dialIn(ctx context.Context, netns *os.File, port int) (net.Conn, error) {
	var c net.Conn
	err := inNetNS(netns, func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp4", "127.0.0.1:"+strconv.Itoa(port))
		return err
	})
	return c, err
}

// FreePortIn asks the kernel for a port nobody listens on in the app's namespace.
func FreePortIn(netns *os.File) (int, error) {
	port := 0
	err := inNetNS(netns, func() error {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: loopback4}); err != nil {
			return err
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			return err
		}
		port = sa.(*syscall.SockaddrInet4).Port
		return nil
	})
	return port, err
}

// DialIn is a DialContext reaching port in the sandbox's network namespace (the edge's
// way in to the app), whatever address is asked.
func (p *Sandboxed) DialIn(port int) func(context.Context, string, string) (net.Conn, error) {
	return dialer(p.netNS, port)
}

// dialer is a DialContext reaching port in the app's namespace, whatever address is asked.
func dialer(netns *os.File, port int) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		return dialIn(ctx, netns, port)
	}
}

// Network makes sure the app's network namespace is up and returns it. Nothing keeps it up
// after: a ReleaseIdleNetwork may end it at once (FreePort holds it while it asks).
func (s *Sandbox) Network(ctx context.Context, appID string) (*os.File, error) {
	n, err := s.appNetwork(ctx, appID)
	if err != nil {
		return nil, err
	}
	s.leaveNetwork(n)
	return n.netNS, nil
}

// FreePort is a port nobody listens on in the app's network namespace (made if need be),
// which is held up while the kernel is asked. A namespace released after (the app napped
// meanwhile) is made anew with every port free.
func (s *Sandbox) FreePort(ctx context.Context, appID string) (int, error) {
	n, err := s.appNetwork(ctx, appID)
	if err != nil {
		return 0, err
	}
	defer s.leaveNetwork(n)
	return FreePortIn(n.netNS)
}

// appNetwork is useNetwork for an app outside a start: its uid and its group checked first.
func (s *Sandbox) appNetwork(ctx context.Context, appID string) (*appNet, error) {
	if s.Unavailable != "" {
		return nil, errors.New("sandbox unavailable: " + s.Unavailable)
	}
	cred := s.Credential(appID)
	if cred == nil {
		return nil, fmt.Errorf("app %s has no uid", appID)
	}
	if err := s.Cgroups.Setup(appID, s.limits(0)); err != nil {
		return nil, err
	}
	return s.useNetwork(ctx, appID, cred)
}

// syncBuffer is a buffer written by a running process's output copier and read meanwhile.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() < 4096 {
		s.b.Write(p[:min(len(p), 4096-s.b.Len())])
	}
	return len(p), nil
}

func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
