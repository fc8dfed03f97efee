package results

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// FillHost records the machine facts that need no child process: CPU model
// and count, kernel release, the Go version the harness was built with, and
// the open-files limit. Facts it cannot read are left as "unknown".
func FillHost(env *Env) {
	env.CPUModel = cpuModel()
	env.CPUs = runtime.NumCPU()
	env.Kernel = "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		env.Kernel = strings.TrimSpace(string(b))
	}
	env.GoVersion = runtime.Version()
	if env.Limits == nil {
		env.Limits = map[string]string{}
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err == nil {
		env.Limits["nofile_soft"] = strconv.FormatUint(lim.Cur, 10)
		env.Limits["nofile_hard"] = strconv.FormatUint(lim.Max, 10)
	}
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// ReadSysctls reads the named kernel settings ("net.core.somaxconn") from
// /proc/sys; a setting that cannot be read is recorded as "unavailable".
func ReadSysctls(names []string) map[string]string {
	out := make(map[string]string, len(names))
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("/proc/sys", strings.ReplaceAll(n, ".", "/")))
		if err != nil {
			out[n] = "unavailable"
			continue
		}
		out[n] = strings.Join(strings.Fields(string(b)), " ")
	}
	return out
}
