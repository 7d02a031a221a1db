package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The zone's database host runs as a user of its own: the process that runs the pooler
// (PgBouncer's parent), the zone agent's child, is neither root nor the cluster's OS user
// (postgres), holds no capability (none effective, permitted or in its bounding set) and
// cannot gain any (no_new_privs); PgBouncer runs as that user too.
func TestDatabaseHostIsUnprivileged(t *testing.T) {
	s := defaultStack(t)
	pooler := listenerPID(t, s.Env["ZONE_POOLER_PORT"])
	host := procStatus(t, pooler)["PPid"]
	hostPID, _ := strconv.Atoi(host)
	st := procStatus(t, hostPID)
	if agent := s.Pid(t, "zoneagent"); st["PPid"] != strconv.Itoa(agent) {
		t.Fatalf("the pooler's parent %d is not the zone agent's child (its parent is %s, the agent %d)", hostPID, st["PPid"], agent)
	}
	uids := strings.Fields(st["Uid"]) // real, effective, saved, filesystem
	if len(uids) != 4 || uids[0] != uids[1] || uids[1] != uids[2] || uids[2] != uids[3] {
		t.Fatalf("the database host's uids differ: %q", st["Uid"])
	}
	if uids[0] == "0" {
		t.Fatal("the database host runs as root")
	}
	if pg, err := user.Lookup("postgres"); err == nil && pg.Uid == uids[0] {
		t.Fatal("the database host runs as the cluster's OS user, postgres")
	}
	for _, field := range []string{"CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"} {
		if v, err := strconv.ParseUint(st[field], 16, 64); err != nil || v != 0 {
			t.Errorf("the database host's %s is %s, want none", field, st[field])
		}
	}
	if st["NoNewPrivs"] != "1" {
		t.Errorf("the database host may gain privileges: NoNewPrivs %s", st["NoNewPrivs"])
	}
	if groups := strings.Fields(st["Groups"]); len(groups) > 0 {
		t.Errorf("the database host has supplementary groups %v", groups)
	}
	if p := strings.Fields(procStatus(t, pooler)["Uid"]); len(p) == 0 || p[0] != uids[0] {
		t.Errorf("PgBouncer runs as uid %v, the database host as %s", p, uids[0])
	}
	t.Logf("database host pid %d uid %s, pooler pid %d", hostPID, uids[0], pooler)
}

// listenerPID is the process listening on TCP port (on any address), from /proc.
func listenerPID(t *testing.T, port string) int {
	t.Helper()
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("pooler port %q", port)
	}
	suffix := fmt.Sprintf(":%04X", n)
	inode := ""
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) > 9 && strings.HasSuffix(fields[1], suffix) && fields[3] == "0A" {
				inode = fields[9]
			}
		}
		f.Close()
	}
	if inode == "" {
		t.Fatalf("nothing listens on port %s", port)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil && link == "socket:["+inode+"]" {
			pid, _ := strconv.Atoi(strings.Split(fd, "/")[2])
			return pid
		}
	}
	t.Fatalf("no process holds the listening socket of port %s", port)
	return 0
}

// procStatus is /proc/<pid>/status as field: value.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}
