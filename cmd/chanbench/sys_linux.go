package main

import "golang.org/x/sys/unix"

// kernel names the running kernel, as in "linux 6.1.0-13-amd64".
func kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "linux"
	}
	return "linux " + unix.ByteSliceToString(u.Release[:])
}
