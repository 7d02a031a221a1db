package sandbox

import (
	"fmt"
	"strings"
)

// Firewall is the zone's nftables table, keyed on the apps' uid range. An app's network
// namespace reaches the host only through pasta, whose sockets on the host belong to the
// app's uid; these rules refuse those sockets the host's own addresses (all but the pooler's
// port), loopback, private, link-local, shared (CGNAT), multicast and reserved ranges. What
// is left is the public internet.
type Firewall struct {
	Nft        string
	Table      string // tori_<zone>
	UIDLo      uint32
	UIDHi      uint32
	PoolerPort int
}

// Blocked4 and Blocked6 are the destinations no app reaches.
var (
	Blocked4 = []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
		"172.16.0.0/12", "192.0.0.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4"}
	Blocked6 = []string{"::/127", "::ffff:0:0/96", "64:ff9b:1::/48", "fc00::/7", "fe80::/10", "ff00::/8"}
)

// Ruleset is the table's text, for nft -f.
func (f Firewall) Ruleset() string {
	uids := fmt.Sprintf("%d-%d", f.UIDLo, f.UIDHi)
	var b strings.Builder
	// Declaring then deleting makes the load idempotent: the new table replaces the old.
	fmt.Fprintf(&b, "table inet %s {}\ndelete table inet %s\n", f.Table, f.Table)
	fmt.Fprintf(&b, "table inet %s {\n\tchain egress {\n\t\ttype filter hook output priority 0; policy accept;\n", f.Table)
	fmt.Fprintf(&b, "\t\tmeta skuid != %s accept\n", uids)
	// Replies on connections that came in (the edge through pasta) are the app's answers.
	b.WriteString("\t\tct state established,related accept\n")
	if f.PoolerPort > 0 {
		fmt.Fprintf(&b, "\t\tip daddr 127.0.0.1 tcp dport %d accept\n", f.PoolerPort)
	}
	b.WriteString("\t\tfib daddr type { local, broadcast, multicast, anycast } reject\n")
	fmt.Fprintf(&b, "\t\tip daddr { %s } reject\n", strings.Join(Blocked4, ", "))
	fmt.Fprintf(&b, "\t\tip6 daddr { %s } reject\n", strings.Join(Blocked6, ", "))
	b.WriteString("\t}\n}\n")
	return b.String()
}

// Apply loads the table.
func (f Firewall) Apply() error {
	cmd := hostCommand(f.Nft, "-f", "-")
	cmd.Stdin = strings.NewReader(f.Ruleset())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
