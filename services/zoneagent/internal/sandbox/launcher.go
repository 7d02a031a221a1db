package sandbox

import "strconv"

// launcherArgs is the launcher's command line: util-linux's prlimit setting the sandbox's
// hard limits on itself, then executing the program named (nsenter, then bubblewrap), which
// passes them on to bubblewrap and everything bubblewrap starts.
//
// Why before the sandbox exists: a hard limit is inherited and only a process with
// CAP_SYS_RESOURCE in the host's user namespace raises it, so a limit set here holds
// whatever the app does. Set inside (prlimit run with the customer's environment), a
// preloaded no-op setrlimit kept the agent's own limits; here prlimit runs with the fixed
// host environment (hostCommand), as nsenter and bubblewrap do, and no customer variable
// exists yet. Soft and hard alike: the app starts at its ceiling.
//
// Why prlimit and not the agent's binary re-executed (as before): a program of 40 KB starts
// in a millisecond, where the agent's Go runtime cost 60-75 ms of CPU per sandbox start on a
// host whose page faults go through its hypervisor: a tenth of a wake's CPU there, paid by
// every one of a hundred wakes after a restart.
func (p Policy) launcherArgs(program string, args ...string) []string {
	nofile := strconv.FormatInt(p.MaxOpenFiles, 10)
	a := []string{"--nofile=" + nofile + ":" + nofile, "--core=0:0", "--", program}
	return append(a, args...)
}
