package load

import (
	"syscall"
	"time"
)

// cpuTime is the user plus system time of the whole process so far: the
// engine's cost when it runs alone in its process, as topobench load does.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
