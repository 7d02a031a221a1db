package sandbox

import "os/exec"

// hostEnv is the whole environment of every program the zone starts on the host (nsenter,
// bubblewrap, pasta, nft, mount, mkfs): fixed, and nothing of the agent's (its database URL
// and keys) nor of any app's. An app's variables would act on the host before any namespace
// applies (LD_PRELOAD, LD_AUDIT, GCONV_PATH, BASH_ENV: code of the customer's in a host
// program); they reach the sandbox only through bubblewrap's argument descriptor (see
// Sandbox.Start).
func hostEnv() []string {
	return []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
}

// hostCommand is exec.Command with the fixed host environment and / as its folder.
func hostCommand(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = hostEnv()
	cmd.Dir = "/"
	return cmd
}
