package supervisor

import (
	"os/exec"
	"strings"
	"testing"
)

// Start lines as customers write them run, whichever form they take.
func TestStartCommandRuns(t *testing.T) {
	for _, line := range []string{
		"echo ok",
		"exec echo ok",
		"  exec echo ok",
		"echo starting >&2; echo ok",
		"X=1 echo ok",
	} {
		t.Run(line, func(t *testing.T) {
			argv := StartCommand(line)
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "ok") {
				t.Fatalf("%q as %q: %v %s", line, argv, err, out)
			}
			if strings.Contains(argv[2], "exec exec") {
				t.Fatalf("%q became %q", line, argv[2])
			}
		})
	}
}
