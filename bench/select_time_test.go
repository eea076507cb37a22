package bench

import (
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

// BenchmarkSelectTimeout: the worker-loop select over a work channel, a
// quit channel and an idle timeout, by one goroutine. With wins=value a
// value is ready on the work channel (capacity 1) at each call and the
// timeout is an hour; with wins=timeout nothing is ever ready and the
// timeout is a microsecond, so the op is mostly the timer's own latency.
// The native side resets one timer per op and selects over the three
// channels; the chans side reuses a Selector over OnRecv, OnDone and
// OnTimeout.
func BenchmarkSelectTimeout(b *testing.B) {
	for _, wins := range []string{"value", "timeout"} {
		d := time.Hour
		if wins == "timeout" {
			d = time.Microsecond
		}
		runNativeChans(b, "/wins="+wins, func(b *testing.B) {
			work, quit := make(chan int, 1), make(chan struct{})
			t := time.NewTimer(d)
			t.Stop()
			for i := 0; i < b.N; i++ {
				if wins == "value" {
					work <- i
				}
				t.Reset(d)
				select {
				case <-work:
				case <-quit:
				case <-t.C:
				}
				t.Stop()
			}
		}, func(b *testing.B) {
			work, quit := chans.New[int](1), make(chan struct{})
			sel := chans.NewSelector(chans.OnRecv(work, nil), chans.OnDone(quit, nil), chans.OnTimeout(d, nil))
			sel.TrySelect() // its first call allocates
			for i := 0; i < b.N; i++ {
				if wins == "value" {
					_ = work.Send(i)
				}
				sel.Select()
			}
		})
	}
}
