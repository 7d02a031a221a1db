//go:build !amd64

package sandbox

// No filter is defined for this architecture: the sandbox reports itself unavailable.
var deniedSyscalls, enosysSyscalls []uintptr
