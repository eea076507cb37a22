package workload

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scalable-go/chans"
)

// runSelectQuit is mpmc where every consumer receives through a select over
// the work channel and its own idle quit channel, the usual cancellation
// check: producers send 1..n with plain sends (through a Handle each for
// chans-handle), consumers select until the work channel is closed and
// drained. The quit channels are never used. chans.Select takes Chans, so the
// consumers of chans and chans-handle run the same select.
func runSelectQuit(cfg Config) (Result, error) {
	g := cfg.Goroutines
	if g == 0 {
		g = 2 * runtime.GOMAXPROCS(0)
	}
	producers := max(1, g/2)
	consumers := max(1, g-producers)
	ch, err := newChannel(cfg.Impl, cfg.Cap, cfg.Messages)
	if err != nil {
		return Result{}, err
	}
	var (
		prod, cons sync.WaitGroup
		count, sum atomic.Int64
		want       int
		gt         = newGate()
	)
	for i := range producers {
		n := share(cfg.Messages, producers, i)
		want += triangle(n)
		e, w := ch.endpoint(), NewWork(cfg.Work, seed(i))
		prod.Add(1)
		go func() {
			defer prod.Done()
			gt.wait()
			for v := 1; v <= n; v++ {
				w.Do()
				e.send(v)
			}
		}()
	}
	var closers []func()
	for i := range consumers {
		w := NewWork(cfg.Work, seed(producers+i))
		var recv func() (int, bool) // one select over work and quit
		switch c := ch.(type) {
		case nativeChan:
			quit := make(chan int)
			closers = append(closers, func() { close(quit) })
			recv = func() (int, bool) {
				select {
				case v, ok := <-c.c:
					return v, ok
				case <-quit:
					return 0, false
				}
			}
		default:
			work := chansOf(c)
			quit := chans.New[int](0)
			closers = append(closers, func() { quit.Close() })
			got := new(Owned[struct {
				v  int
				ok bool
			}])
			cases := []chans.Case{
				chans.OnRecv(work, func(x int, o bool) { got.V.v, got.V.ok = x, o }),
				chans.OnRecv(quit, func(int, bool) { got.V.v, got.V.ok = 0, false }),
			}
			recv = func() (int, bool) {
				chans.Select(cases...)
				return got.V.v, got.V.ok
			}
		}
		cons.Add(1)
		go func() {
			defer cons.Done()
			gt.wait()
			k, s := 0, 0
			for {
				v, ok := recv()
				if !ok {
					break
				}
				k++
				s += v
				w.Do()
			}
			count.Add(int64(k))
			sum.Add(int64(s))
		}()
	}
	t := gt.start()
	prod.Wait()
	ch.close()
	cons.Wait()
	r := Result{Elapsed: time.Since(t), Messages: int(count.Load())}
	for _, f := range closers {
		f()
	}
	if r.Messages != cfg.Messages || int(sum.Load()) != want {
		return r, fmt.Errorf("workload select-quit/%s: received %d messages summing to %d, want %d summing to %d",
			cfg.Impl, r.Messages, sum.Load(), cfg.Messages, want)
	}
	return r, nil
}

// chansOf returns the chans.Chan behind a chans or chans-handle channel.
func chansOf(c channel) *chans.Chan[int] {
	switch c := c.(type) {
	case chansChan:
		return c.c
	case chansHandleChan:
		return c.c
	}
	panic(fmt.Sprintf("workload: %T is not a chans channel", c))
}
