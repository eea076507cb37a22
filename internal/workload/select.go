package workload

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// runSelectQuit is mpmc where every consumer receives through a select over
// the work channel and its own idle quit channel, the cancellation check of
// seed 001: producers send 1..n with plain sends, consumers select until the
// work channel is closed and drained. The quit channels are never used.
//
// TODO: the chans implementations wait for chans.Select
// (chans.OnRecv(c, func(v T, ok bool)) and chans.Select(cases...) int).
func runSelectQuit(cfg Config) (Result, error) {
	if cfg.Impl != Native {
		return Result{}, ErrSelectUnavailable
	}
	g := cfg.Goroutines
	if g == 0 {
		g = 2 * runtime.GOMAXPROCS(0)
	}
	producers := max(1, g/2)
	consumers := max(1, g-producers)
	capacity := cfg.Cap
	if capacity < 0 {
		capacity = max(cfg.Messages, 1)
	}
	work := make(chan int, capacity)
	var (
		prod, cons sync.WaitGroup
		count, sum atomic.Int64
		want       int
		gt         = newGate()
	)
	for i := range producers {
		n := share(cfg.Messages, producers, i)
		want += triangle(n)
		w := NewWork(cfg.Work, seed(i))
		prod.Add(1)
		go func() {
			defer prod.Done()
			gt.wait()
			for v := 1; v <= n; v++ {
				w.Do()
				work <- v
			}
		}()
	}
	quits := make([]chan int, consumers)
	for i := range consumers {
		quit := make(chan int)
		quits[i] = quit
		w := NewWork(cfg.Work, seed(producers+i))
		cons.Add(1)
		go func() {
			defer cons.Done()
			gt.wait()
			k, s := 0, 0
		loop:
			for {
				select {
				case v, ok := <-work:
					if !ok {
						break loop
					}
					k++
					s += v
					w.Do()
				case <-quit:
					break loop
				}
			}
			count.Add(int64(k))
			sum.Add(int64(s))
		}()
	}
	t := gt.start()
	prod.Wait()
	close(work)
	cons.Wait()
	r := Result{Elapsed: time.Since(t), Messages: int(count.Load())}
	for _, q := range quits {
		close(q)
	}
	if r.Messages != cfg.Messages || int(sum.Load()) != want {
		return r, fmt.Errorf("workload select-quit/%s: received %d messages summing to %d, want %d summing to %d",
			cfg.Impl, r.Messages, sum.Load(), cfg.Messages, want)
	}
	return r, nil
}
