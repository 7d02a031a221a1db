package e2e

import (
	"os/user"
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
