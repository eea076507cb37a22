//go:build !linux

package main

import (
	"os"
	"runtime"
)

// isTerminal reports whether f is a character device, which outside Linux
// stands in for a terminal (it also holds for /dev/null, where drawing
// progress is harmless).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// kernel names the operating system.
func kernel() string { return runtime.GOOS }
