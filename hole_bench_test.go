package chans

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
)

// BenchmarkAfterHole measures a buffered channel before and after its first
// hole, against a native channel of the same capacity: GOMAXPROCS
// producers and as many consumers move b.N values. impl=chans-hole is a
// channel on cells whose first parked send was cancelled before the run
// (cancelSend): from then on it counts its buffer's end with explicit
// expansions (holesOn). It uses the package's internals, so it lives here
// rather than in bench/.
func BenchmarkAfterHole(b *testing.B) {
	for _, capacity := range []int{1, 64, 1024} {
		suffix := "/cap=" + strconv.Itoa(capacity)
		b.Run("impl=native"+suffix, func(b *testing.B) {
			c := make(chan int, capacity)
			holeProdCons(b, func(v int) { c <- v }, func() { <-c })
		})
		b.Run("impl=chans"+suffix, func(b *testing.B) {
			c := newCells[int](capacity)
			holeProdCons(b, func(v int) { c.Send(v) }, func() { c.Recv() })
		})
		b.Run("impl=chans-hole"+suffix, func(b *testing.B) {
			c := newCells[int](capacity)
			for range capacity {
				c.Send(0)
			}
			cancelSend(b, c, 0) // the channel's first hole
			for range capacity {
				c.Recv()
			}
			holeProdCons(b, func(v int) { c.Send(v) }, func() { c.Recv() })
		})
	}
}

// holeProdCons runs GOMAXPROCS producers calling send and as many consumers
// calling recv, b.N messages in all, with allocation reporting on.
func holeProdCons(b *testing.B, send func(int), recv func()) {
	p := runtime.GOMAXPROCS(0)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	for i := range p {
		n := b.N / p
		if i < b.N%p {
			n++
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range n {
				send(j)
			}
		}()
		go func() {
			defer wg.Done()
			for range n {
				recv()
			}
		}()
	}
	wg.Wait()
}
