package imageruntime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"tori.dev/services/zoneagent/internal/sandbox"
)

// AppNetwork is an app's own container network: a bridge of its own, which its release
// Job and service containers share and no other app's containers join. What leaves the
// bridge is forwarded by the host, where ContainerFirewall holds it to the sandbox's deny
// list (sandbox.Policy).
type AppNetwork struct {
	Name   string // the engine's name for it: tori-app-<app id>
	Bridge string // the host's interface: tc-<12 hex of the app id's digest>, 15 bytes as Linux allows
}

const (
	appNetworkPrefix = "tori-app-"
	// BridgePrefix starts the host interface of every app's container network; the forward
	// rules match it.
	BridgePrefix = "tc-"
)

// AppNetworkOf is the network of an app's containers.
func AppNetworkOf(appID string) AppNetwork {
	sum := sha256.Sum256([]byte(appID))
	return AppNetwork{Name: appNetworkPrefix + appID, Bridge: BridgePrefix + hex.EncodeToString(sum[:6])}
}

// ContainerFirewall is the zone's nftables table for image containers: their traffic is
// forwarded by the host from their app's bridge (or delivered to the host itself), not sent
// by a socket of the app's uid, so the sandbox's table (Firewall, on the output hook) never
// sees it. These rules meet it on the forward and input hooks, keyed on the bridges' names:
// a new connection from a container to loopback, private, link-local, shared (CGNAT),
// multicast or reserved addresses, to another app's bridge, or to the host itself (but DNS)
// is refused. Replies on connections the host opened (the edge through the published port)
// pass. What is left is the public internet.
type ContainerFirewall struct {
	Nft   string
	Table string // tori_<zone>_images
}

// Ruleset is the table's text, for nft -f.
func (f ContainerFirewall) Ruleset() string {
	bridges := `"` + BridgePrefix + `*"`
	var b strings.Builder
	// Declaring then deleting makes the load idempotent: the new table replaces the old.
	fmt.Fprintf(&b, "table inet %s {}\ndelete table inet %s\n", f.Table, f.Table)
	fmt.Fprintf(&b, "table inet %s {\n", f.Table)
	// Before the engine's own rules (docker's at filter priority): a reject here is final.
	b.WriteString("\tchain forward {\n\t\ttype filter hook forward priority filter - 10; policy accept;\n")
	fmt.Fprintf(&b, "\t\tiifname != %s accept\n", bridges)
	b.WriteString("\t\tct state established,related accept\n")
	fmt.Fprintf(&b, "\t\toifname %s reject\n", bridges) // another app's containers
	// The sandbox's refusals; containers reach no port of the host through them (not even
	// the pooler's: an image app's database is reached as the internet reaches it).
	b.WriteString(sandbox.Policy{}.RefuseNonPublic())
	b.WriteString("\t}\n")
	// The host's own services on the bridge's address (or any of its addresses): none but
	// DNS, which podman's resolver answers there.
	b.WriteString("\tchain input {\n\t\ttype filter hook input priority filter - 10; policy accept;\n")
	fmt.Fprintf(&b, "\t\tiifname != %s accept\n", bridges)
	b.WriteString("\t\tct state established,related accept\n")
	b.WriteString("\t\tmeta l4proto { tcp, udp } th dport 53 accept\n")
	b.WriteString("\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit } accept\n")
	b.WriteString("\t\treject\n")
	b.WriteString("\t}\n}\n")
	return b.String()
}

// Apply loads the table.
func (f ContainerFirewall) Apply() error {
	cmd := exec.Command(f.Nft, "-f", "-")
	cmd.Env = []string{"PATH=" + sandbox.BasePath}
	cmd.Stdin = strings.NewReader(f.Ruleset())
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nft: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
