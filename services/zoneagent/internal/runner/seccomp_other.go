//go:build !amd64

package runner

// No filter is defined for this architecture: the sandbox reports itself unavailable.
var deniedSyscalls, enosysSyscalls []uintptr
