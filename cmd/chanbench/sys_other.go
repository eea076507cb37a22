//go:build !linux

package main

import "runtime"

// kernel names the operating system.
func kernel() string { return runtime.GOOS }
