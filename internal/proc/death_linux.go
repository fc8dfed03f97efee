package proc

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel kill the child if the harness itself dies
// without cleaning up (SIGKILL, crash), so no server is left holding ports.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
