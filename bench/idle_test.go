//go:build unix

package bench

import (
	"context"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

func init() { barIdle = benchIdle }

// idleGoroutines is how many goroutines benchIdle leaves blocked.
const idleGoroutines = 1000

// benchIdle is the bar's "no spinning while idle" row: it blocks 1000
// goroutines on channels that never become ready (a quarter each in Recv on
// a rendezvous channel, Send on a full channel, RecvContext on an empty
// buffered channel, and a two-case select), lets them settle, and then
// measures the CPU time of the whole process over wall time. One op is one
// millisecond of wall time; the cpu-ns/op metric is the CPU time spent in
// it, by every thread of the process. Near 0 means nobody spins.
func benchIdle(b *testing.B) {
	b.Run("impl=native/g=1000", func(b *testing.B) {
		b.ReportAllocs()
		r0, s0, r1, r2 := make(chan int), make(chan int, 1), make(chan int, 8), make(chan int)
		s0 <- 0
		ctx, cancel := context.WithCancel(context.Background())
		idleRun(b, cancel, []func(){
			func() { <-r0 },
			func() { s0 <- 1 },
			func() {
				select {
				case <-r1:
				case <-ctx.Done():
				}
			},
			func() {
				select {
				case <-r1:
				case <-r2:
				}
			},
		}, func() {
			close(r0)
			for range 1 + idleGoroutines/4 { // the first value, then each blocked sender's
				<-s0
			}
			close(r1)
			close(r2)
		})
	})
	b.Run("impl=chans/g=1000", func(b *testing.B) {
		b.ReportAllocs()
		r0, s0, r1, r2 := chans.New[int](0), chans.New[int](1), chans.New[int](8), chans.New[int](0)
		if err := s0.TrySend(0); err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		idleRun(b, cancel, []func(){
			func() { r0.Recv() },
			func() { s0.Send(1) },
			func() { r1.RecvContext(ctx) },
			func() { chans.Select(chans.OnRecv(r1, nil), chans.OnRecv(r2, nil)) },
		}, func() { r0.Close(); s0.Close(); r1.Close(); r2.Close() })
	})
}

// idleRun starts idleGoroutines goroutines, spread over the blocking calls
// in block, waits for them to settle, measures, then runs release (and
// cancel) and waits for every goroutine to return.
func idleRun(b *testing.B, cancel func(), block []func(), release func()) {
	var wg sync.WaitGroup
	wg.Add(idleGoroutines)
	for i := range idleGoroutines {
		go func(f func()) {
			defer wg.Done()
			f()
		}(block[i%len(block)])
	}
	// A benchmark may sleep: give every goroutine time to reach its
	// blocking call, spin its short bounded spin, and park.
	time.Sleep(50 * time.Millisecond)
	runtime.GC()

	b.ResetTimer()
	start, wall := cpuTime(b), time.Now()
	time.Sleep(time.Duration(b.N) * time.Millisecond)
	cpu, elapsed := cpuTime(b)-start, time.Since(wall)
	b.StopTimer()
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(100*float64(cpu)/float64(elapsed), "cpu-%")

	cancel()
	release()
	wg.Wait()
}

// cpuTime is the user plus system CPU time of the process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
