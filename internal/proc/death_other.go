//go:build !linux

package proc

import (
	"os/exec"
	"syscall"
)

func setDeathSignal(cmd *exec.Cmd, sig syscall.Signal) {}
