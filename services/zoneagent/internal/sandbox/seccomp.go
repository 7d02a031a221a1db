package sandbox

import (
	"encoding/binary"
	"runtime"

	"golang.org/x/sys/unix"
)

// The seccomp filter loaded into every sandbox (bwrap --seccomp). It refuses, with EPERM,
// every system call Docker's default profile refuses to a container without added
// capabilities — kernel modules, mounts, namespaces, keyrings, BPF, ptrace of other
// processes' memory, clocks, swap, reboot, accounting — and kills a process that calls in
// through another ABI (32-bit or x32), where the numbers below would mean other calls.
// It is a deny list compiled to classic BPF here, rather than Docker's allow list, so that a
// runtime using a call added to the kernel after this list still works.

// namespaceFlags are the clone flags that would make new namespaces.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// Classic BPF opcodes and seccomp return values.
const (
	bpfLdW    = 0x20 // BPF_LD|BPF_W|BPF_ABS
	bpfJeqK   = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
	bpfJsetK  = 0x45 // BPF_JMP|BPF_JSET|BPF_K
	bpfRetK   = 0x06 // BPF_RET|BPF_K
	retAllow  = 0x7fff0000
	retKill   = 0x80000000 // SECCOMP_RET_KILL_PROCESS
	retErrno  = 0x00050000
	offNr     = 0
	offArch   = 4
	offArg0Lo = 16 // args[0], low 32 bits on little-endian
	x32Bit    = 0x40000000
)

// auditArch is this machine's AUDIT_ARCH; the filter is built for the agent's own
// architecture, which is the one the sandboxed programs run in.
func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return 0xc000003e, true
	}
	return 0, false
}

type insn struct {
	code   uint16
	jt, jf uint8
	k      uint32
}

// SeccompProgram is the filter as bwrap reads it: struct sock_filter entries, in the
// machine's byte order. It returns nil on an architecture it does not know.
func SeccompProgram(p Policy) []byte {
	arch, ok := auditArch()
	if !ok {
		return nil
	}
	prog := []insn{
		{bpfLdW, 0, 0, offArch},
		{bpfJeqK, 1, 0, arch},
		{bpfRetK, 0, 0, retKill},
		{bpfLdW, 0, 0, offNr},
	}
	if runtime.GOARCH == "amd64" {
		// x32 calls carry this bit in their number; refuse the whole ABI.
		prog = append(prog, insn{bpfJsetK, 0, 1, x32Bit}, insn{bpfRetK, 0, 0, retErrno | uint32(unix.EPERM)})
	}
	eperm, enosys := p.refusedSyscalls()
	for _, nr := range eperm {
		prog = append(prog, insn{bpfJeqK, 0, 1, uint32(nr)}, insn{bpfRetK, 0, 0, retErrno | uint32(unix.EPERM)})
	}
	for _, nr := range enosys {
		prog = append(prog, insn{bpfJeqK, 0, 1, uint32(nr)}, insn{bpfRetK, 0, 0, retErrno | uint32(unix.ENOSYS)})
	}
	// clone: allowed unless it asks for a namespace.
	prog = append(prog,
		insn{bpfJeqK, 0, 4, uint32(unix.SYS_CLONE)},
		insn{bpfLdW, 0, 0, offArg0Lo},
		insn{bpfJsetK, 0, 1, namespaceFlags},
		insn{bpfRetK, 0, 0, retErrno | uint32(unix.EPERM)},
		insn{bpfRetK, 0, 0, retAllow},
		insn{bpfRetK, 0, 0, retAllow},
	)
	out := make([]byte, 0, len(prog)*8)
	for _, in := range prog {
		out = binary.NativeEndian.AppendUint16(out, in.code)
		out = append(out, in.jt, in.jf)
		out = binary.NativeEndian.AppendUint32(out, in.k)
	}
	return out
}
