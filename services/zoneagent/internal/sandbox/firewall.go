package sandbox

import (
	"fmt"
	"strings"
)

// Firewall is the zone's nftables table, keyed on the apps' uid range. An app's network
// namespace reaches the host only through pasta, whose sockets on the host belong to the
// app's uid; these rules hold those sockets to the Policy: the host's own addresses (all
// but the pooler's port) and every non-public range refused (Policy.egressRules).
type Firewall struct {
	Nft    string
	Table  string // tori_<zone>
	UIDLo  uint32
	UIDHi  uint32
	Policy Policy // what the apps may reach
}

// Ruleset is the table's text, for nft -f.
func (f Firewall) Ruleset() string {
	uids := fmt.Sprintf("%d-%d", f.UIDLo, f.UIDHi)
	var b strings.Builder
	// Declaring then deleting makes the load idempotent: the new table replaces the old.
	fmt.Fprintf(&b, "table inet %s {}\ndelete table inet %s\n", f.Table, f.Table)
	fmt.Fprintf(&b, "table inet %s {\n\tchain egress {\n\t\ttype filter hook output priority 0; policy accept;\n", f.Table)
	fmt.Fprintf(&b, "\t\tmeta skuid != %s accept\n", uids)
	b.WriteString(f.Policy.egressRules())
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
