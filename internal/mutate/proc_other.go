//go:build !unix

package main

import (
	"os/exec"
	"time"
)

// killGroup: without process groups, a timeout kills go test only, and the
// output is given up on after a while.
func killGroup(cmd *exec.Cmd) {
	cmd.WaitDelay = 10 * time.Second
}
