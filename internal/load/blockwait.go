package load

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

//go:linkname entersyscallblock runtime.entersyscallblock
func entersyscallblock()

//go:linkname exitsyscall runtime.exitsyscall
func exitsyscall()

// blockWait is an epoll_wait that hands the loop's P back to the Go
// runtime before it blocks, as the runtime's own blocking calls do, and
// takes one again after. Through the ordinary system call path
// (entersyscall) a loop waiting in epoll_wait keeps its P, and as a loop
// is never rescheduled, sysmon finds the P on the same tick 10 ms later,
// preempts the loop and retakes the P; the preempted loop, locked to its
// thread, then costs futex hand-offs between threads, a share of a load
// CPU that grows with the loops. The runtime exports entersyscallblock and exitsyscall for
// such callers (go.dev/issue/67401).
//
//go:nosplit
func blockWait(epfd int, events []unix.EpollEvent, ms int) (int, unix.Errno) {
	entersyscallblock()
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), uintptr(ms), 0, 0)
	exitsyscall()
	return int(n), e
}
