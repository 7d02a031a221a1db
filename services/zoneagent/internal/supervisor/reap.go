package supervisor

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ReapOrphans kills every process left running in a customer tree under appsDir, by its
// working folder.
// Processes die with the agent (Pdeathsig), but that reaches only the agent's direct child:
// a shell's own children would outlive a crash. The agent calls this at start, before any
// revision runs, so a restart never leaves an orphan beside the process it starts anew.
func ReapOrphans(appsDir string) int {
	root := filepath.Clean(appsDir) + string(filepath.Separator)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	killed := 0
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd+string(filepath.Separator), root) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed++
		}
	}
	return killed
}
