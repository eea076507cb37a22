package main

import (
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// roundTrip measures a cross-core cache-line round trip: two goroutines take
// turns to store into one atomic word, each spinning until the other has
// stored, so that every turn moves the word's line from one core to the
// other. It returns the median over a few batches of the time per round trip,
// or 0 where fewer than two Ps or CPUs could run the goroutines side by side.
//
// On shared cloud machines this changes as the host moves virtual CPUs
// around: on the 2-core development VM it is either about 80-140 ns or
// about 350-415 ns, for minutes at a time, and workloads whose goroutines
// run on both cores at once are slower in the second case (two producers
// and two consumers with no work: 1.7x for native channels, 3.4x for
// chans). chanbench reports it before and after the runs so that
// results taken in different states are not compared as if they were alike.
func roundTrip() time.Duration {
	if runtime.GOMAXPROCS(0) < 2 || runtime.NumCPU() < 2 {
		return 0
	}
	const batches, trips = 5, 5000
	var word atomic.Int64
	times := make([]time.Duration, 0, batches)
	for range batches {
		word.Store(0)
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := int64(1); i < 2*trips; i += 2 {
				spinUntil(&word, i)
				word.Store(i + 1)
			}
		}()
		start := time.Now()
		for i := int64(0); i < 2*trips; i += 2 {
			spinUntil(&word, i)
			word.Store(i + 1)
		}
		<-done
		times = append(times, time.Since(start)/trips)
	}
	slices.Sort(times)
	return times[batches/2]
}

// spinUntil spins until w holds v, yielding now and then in case the other
// goroutine shares this goroutine's P.
func spinUntil(w *atomic.Int64, v int64) {
	for i := 1; w.Load() != v; i++ {
		if i%(1<<16) == 0 {
			runtime.Gosched()
		}
	}
}

// roundTripNote is the header line for the probes taken before and after
// the runs (after is 0 before the runs have ended).
func roundTripNote(before, after time.Duration) string {
	if before == 0 {
		return ""
	}
	s := fmt.Sprintf("cross-core round trip: %d ns before the runs", before.Nanoseconds())
	if after != 0 {
		s += fmt.Sprintf(", %d ns after", after.Nanoseconds())
	}
	return s + " (one cache line bounced between two goroutines; on shared virtual machines it changes with the host's placement of CPUs, and results at GOMAXPROCS 2 or more change with it)"
}
