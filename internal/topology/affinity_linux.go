//go:build linux

package topology

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Detect returns the running machine's topology, restricted to the CPUs the
// process may run on. When sysfs cannot be read it falls back to one domain
// of CPUs 0..runtime.NumCPU()-1.
func Detect() Topology {
	t, err := Read("/sys")
	if err != nil || t.NumCPU() == 0 {
		t = Single(seq(runtime.NumCPU()))
	}
	if allowed, err := Allowed(); err == nil {
		if r := t.Restrict(allowed); r.NumCPU() > 0 {
			t = r
		}
	}
	return t
}

// Allowed returns the CPUs in the calling thread's affinity mask.
func Allowed() ([]int, error) {
	return allowedOf(0)
}

// allowedOf returns the CPUs in thread tid's affinity mask (0: the caller).
func allowedOf(tid int) ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(tid, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// Pin sets the CPU affinity of every thread of the process to cpus.
//
// sched_setaffinity(0, ...) changes only the calling thread, and a Go
// program runs goroutines on many threads, so Pin walks /proc/self/task and
// sets each thread's mask, then lists the threads again until a pass finds
// no thread it has not set. A thread created during a pass, by a thread not
// yet set, is caught by the next pass; once a listing turns up nothing new
// every thread has the mask, and threads created later inherit it from
// their creator.
//
// Limits: Pin restricts where threads run; it does not bind a goroutine or
// a thread to one CPU. runtime.NumCPU keeps the value it read at start-up.
// A thread that changes its own mask afterwards (cgo code, say) escapes, and
// CPUs outside the process's cpuset make the kernel refuse the mask
// (EINVAL). On failure some threads may already carry the new mask; callers
// that care should Pin the old set back.
func Pin(cpus []int) error {
	if len(cpus) == 0 {
		return errors.New("pin: no CPUs")
	}
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return fmt.Errorf("pin: cpu %d out of range", c)
		}
		set.Set(c)
	}
	done := make(map[int]bool)
	for pass := 0; ; pass++ {
		if pass == 100 {
			return errors.New("pin: threads kept appearing faster than they could be pinned")
		}
		tids, err := threads()
		if err != nil {
			return err
		}
		fresh := 0
		for _, tid := range tids {
			if done[tid] {
				continue
			}
			fresh++
			done[tid] = true
			err := unix.SchedSetaffinity(tid, &set)
			if err != nil && !errors.Is(err, unix.ESRCH) { // ESRCH: the thread exited
				return fmt.Errorf("pin: sched_setaffinity(%d, %s): %w", tid, FormatCPUList(cpus), err)
			}
		}
		if fresh == 0 {
			return nil
		}
	}
}

// threads lists the process's thread ids.
func threads() ([]int, error) {
	f, err := os.Open("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("pin: %w", err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("pin: %w", err)
	}
	tids := make([]int, 0, len(names))
	for _, n := range names {
		if tid, err := strconv.Atoi(n); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
