//go:build unix

package main

import (
	"os/exec"
	"syscall"
	"time"
)

// killGroup makes cmd the leader of a new process group and has a timeout
// kill the whole group: go test's test binary with it.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
}
