package bench

import (
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkTryRecvLoop: P producers send b.N values through a channel of 64
// or 1024 slots to P consumers that poll it, each taking what TryRecv gives
// and blocking in Recv only when TryRecv finds the channel empty (native:
// a select with a default case, then a receive). impl=chans-handle polls
// through a Handle per consumer.
func BenchmarkTryRecvLoop(b *testing.B) {
	for _, c := range []int{64, 1024} {
		runImpls(b, "", sub("/cap=%d/g=P", c), impls, func(b *testing.B, im Impl) {
			pollLoop(b, im, c, false)
		})
	}
}

// BenchmarkTrySendLoop is BenchmarkTryRecvLoop with the roles turned: the
// producers try (TrySend, blocking in Send only when it finds no room), the
// consumers receive.
func BenchmarkTrySendLoop(b *testing.B) {
	for _, c := range []int{64, 1024} {
		runImpls(b, "", sub("/cap=%d/g=P", c), impls, func(b *testing.B, im Impl) {
			pollLoop(b, im, c, true)
		})
	}
}

// pollLoop is prodCons with P producers and P consumers, without work, whose
// consumers (or, with sends set, producers) try before they wait.
func pollLoop(b *testing.B, im Impl, capacity int, sends bool) {
	p := procs()
	q := im.New(capacity, b.N)
	var (
		prod, cons sync.WaitGroup
		got, sum   atomic.Int64
		want       int64
		start      = make(chan struct{})
	)
	for i := range p {
		n := share(b.N, p, i)
		want += int64(n) * int64(n+1) / 2
		l := q.Local()
		prod.Add(1)
		go func() {
			defer prod.Done()
			<-start
			for v := 1; v <= n; v++ {
				if !sends || !l.TrySend(v) {
					l.Send(v)
				}
			}
		}()
	}
	for range p {
		l := q.Local()
		cons.Add(1)
		go func() {
			defer cons.Done()
			<-start
			k, s := 0, 0
			for {
				var v int
				ok := false
				if !sends {
					v, ok = l.TryRecv()
				}
				if !ok {
					if v, ok = l.Recv(); !ok {
						break
					}
				}
				k++
				s += v
			}
			got.Add(int64(k))
			sum.Add(int64(s))
		}()
	}
	b.ResetTimer()
	close(start)
	prod.Wait()
	q.Close()
	cons.Wait()
	b.StopTimer()
	if got.Load() != int64(b.N) || sum.Load() != want {
		b.Fatalf("received %d messages summing to %d, want %d summing to %d", got.Load(), sum.Load(), b.N, want)
	}
}
