package managed

import (
	"fmt"
	"net"
	"os/exec"
	"sort"
	"strings"

	"tori.dev/services/zoneagent/internal/sandbox"
)

// One app's connections to the pooler must not refuse another's: PgBouncer's max_client_conn
// is shared by every app, and PgBouncer 1.18 has no per-database or per-user client cap. So
// the zone caps each app's connections to the pooler where they enter it, in nftables: an
// app's sandbox reaches the host only through pasta, whose sockets on the host belong to the
// app's uid, and a rule on the output hook counts the connections of each uid to the pooler's
// address (ct count) and resets those past its cap. The app cannot lift it: it is the host's
// ruleset, and the app's uid is not root. max_client_conn is the sum of the caps and a margin
// (Pooler.maxClients), so apps within their caps never meet it.
//
// Counting lives in dynamic sets, one per cap (an element per uid), never in a rule that is
// rewritten: the rules and the uid → cap map are replaced when databases come and go, and the
// counts of every app stay as they were.

// ClientsPerConnection is how many client connections an app may hold to the pooler for each
// server connection its plan gives (databaseConnections): transaction pooling shares few
// server connections among many clients. The figure is the sandbox's promise
// (sandbox.Policy); this table enforces it.
const ClientsPerConnection = sandbox.PoolerClientsPerConnection

// OtherAppClients caps the connections of an app the zone knows no database of (none, or its
// uid not yet known): each such app at most this many, and all of them together at most
// OtherAppsClients. They only reach the pooler's login, and never crowd out an app with a
// database.
const (
	OtherAppClients  = sandbox.PoolerClientsWithoutDatabase
	OtherAppsClients = sandbox.PoolerClientsWithoutDatabases
)

// ClientCap is the cap of an app whose databases have these pool sizes (a restore is a
// second database of the same app).
func ClientCap(poolSizes ...int) int {
	n := 0
	for _, s := range poolSizes {
		n += s * ClientsPerConnection
	}
	return n
}

// ClientCaps is the zone's nftables table for the caps, keyed on the apps' uid range.
type ClientCaps struct {
	Nft   string // nft
	Table string // tori_<zone>_pooler
	// Pooler is the pooler's address, host:port (an IPv4 loopback address, as apps reach it).
	Pooler       string
	UIDLo, UIDHi uint32
}

// Init makes the table anew (at the agent's start): every app under OtherAppClients until
// Sync names its cap.
func (c ClientCaps) Init() error {
	host, port, err := net.SplitHostPort(c.Pooler)
	if err != nil || net.ParseIP(host).To4() == nil {
		return fmt.Errorf("managed: client caps: the pooler's address %q is not IPv4 host:port", c.Pooler)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {}\ndelete table inet %s\n", c.Table, c.Table)
	fmt.Fprintf(&b, "table inet %s {\n", c.Table)
	fmt.Fprintf(&b, "\tset others { typeof meta skuid; size 131072; flags dynamic; }\n")
	fmt.Fprintf(&b, "\tmap caps { type uid : verdict; }\n")
	fmt.Fprintf(&b, "\tchain clients {\n\t\ttype filter hook output priority filter; policy accept;\n")
	fmt.Fprintf(&b, "\t\tip daddr %s tcp dport %s ct state new meta skuid %d-%d jump capped\n\t}\n", host, port, c.UIDLo, c.UIDHi)
	fmt.Fprintf(&b, "\tchain capped {\n\t\tmeta skuid vmap @caps\n\t\tjump others\n\t}\n")
	fmt.Fprintf(&b, "\tchain others {\n\t\tadd @others { meta skuid ct count over %d } reject with tcp reset\n", OtherAppClients)
	fmt.Fprintf(&b, "\t\tct count over %d reject with tcp reset\n\t}\n}\n", OtherAppsClients)
	return c.load(b.String())
}

// SyncRuleset is what Sync loads: a set and a chain per cap (added if missing, never
// replaced: they hold the counts) and the uid → cap map, replaced whole in one transaction.
func (c ClientCaps) SyncRuleset(caps map[uint32]int) string {
	uids := make([]uint32, 0, len(caps))
	levels := map[int]bool{}
	for uid, n := range caps {
		if uid < c.UIDLo || uid > c.UIDHi || n < 1 {
			continue
		}
		uids = append(uids, uid)
		levels[n] = true
	}
	sort.Slice(uids, func(i, j int) bool { return uids[i] < uids[j] })
	var b strings.Builder
	for n := range levels {
		// "add" leaves an existing set and its elements alone; the chain's rules are
		// rewritten (flush), which keeps the set's counts.
		fmt.Fprintf(&b, "add set inet %s cap_%d { typeof meta skuid; size 131072; flags dynamic; }\n", c.Table, n)
		fmt.Fprintf(&b, "add chain inet %s cap_%d\nflush chain inet %s cap_%d\n", c.Table, n, c.Table, n)
		fmt.Fprintf(&b, "add rule inet %s cap_%d add @cap_%d { meta skuid ct count over %d } reject with tcp reset\n", c.Table, n, n, n)
		fmt.Fprintf(&b, "add rule inet %s cap_%d accept\n", c.Table, n)
	}
	fmt.Fprintf(&b, "flush map inet %s caps\n", c.Table)
	if len(uids) > 0 {
		elems := make([]string, len(uids))
		for i, uid := range uids {
			elems[i] = fmt.Sprintf("%d : jump cap_%d", uid, caps[uid])
		}
		fmt.Fprintf(&b, "add element inet %s caps { %s }\n", c.Table, strings.Join(elems, ", "))
	}
	return b.String()
}

// Sync gives each app uid in caps its cap; every other app is under OtherAppClients.
func (c ClientCaps) Sync(caps map[uint32]int) error { return c.load(c.SyncRuleset(caps)) }

// Remove deletes the table (the pooler is stopping).
func (c ClientCaps) Remove() error {
	return c.load(fmt.Sprintf("table inet %s {}\ndelete table inet %s\n", c.Table, c.Table))
}

func (c ClientCaps) load(ruleset string) error {
	cmd := exec.Command(c.Nft, "-f", "-")
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Stdin = strings.NewReader(ruleset)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("managed: nft: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
