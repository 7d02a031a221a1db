// Package netlab is what the network tests share (test code only): ip(8), and the two
// Python scripts they run inside namespaces of their own, a banner server and a probe.
package netlab

import (
	"os/exec"
	"strings"
	"testing"
)

// IP runs ip(8), failing the test on error.
func IP(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Banner is the server every test host runs: it answers each connection with its name.
const Banner = `import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[2]))); s.listen(64)
print("ready", flush=True)
while True:
    c, _ = s.accept(); c.sendall(sys.argv[1].encode()); c.close()
`

// Probe is what the sandboxed app runs: one TCP connection to each address, printing
// "<addr> <banner>" or "<addr> refused: <error>".
const Probe = `import socket, sys
for a in sys.argv[1:]:
    h, p = a.rsplit(":", 1)
    try:
        c = socket.create_connection((h, int(p)), timeout=2)
        c.settimeout(2)
        print(a, c.recv(64).decode() or "(nothing)", flush=True)
        c.close()
    except Exception as e:
        print(a, "refused:", e, flush=True)
`
