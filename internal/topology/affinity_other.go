//go:build !linux

package topology

import (
	"errors"
	"runtime"
)

// Detect returns one domain of CPUs 0..runtime.NumCPU()-1: outside Linux
// the topology is not read.
func Detect() Topology {
	return Single(seq(runtime.NumCPU()))
}

// Allowed is not supported outside Linux.
func Allowed() ([]int, error) {
	return nil, errors.ErrUnsupported
}

// Pin is not supported outside Linux.
func Pin(cpus []int) error {
	return errors.ErrUnsupported
}
