package load

import (
	"syscall"
	"time"
)

// cpuTimes is the user and system time of the whole process so far: the
// engine's cost when it runs alone in its process, as topobench load does.
type cpuTimes struct{ user, sys time.Duration }

func readCPU() cpuTimes {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTimes{}
	}
	return cpuTimes{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
}

func (c cpuTimes) sub(d cpuTimes) cpuTimes { return cpuTimes{c.user - d.user, c.sys - d.sys} }
func (c cpuTimes) total() time.Duration    { return c.user + c.sys }
