package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// kernel names the running kernel, as in "linux 6.1.0-13-amd64".
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "linux"
	}
	return "linux " + unix.ByteSliceToString(u.Release[:])
}
