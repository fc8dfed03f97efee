package proc

import (
	"os/exec"
	"syscall"
)

// setDeathSignal makes the kernel signal the child if the harness itself dies
// without cleaning up (SIGKILL, crash), so no server is left holding ports.
func setDeathSignal(cmd *exec.Cmd, sig syscall.Signal) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: sig}
}
