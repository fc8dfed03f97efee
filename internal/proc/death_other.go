//go:build !linux

package proc

import "os/exec"

func setDeathSignal(cmd *exec.Cmd) {}
