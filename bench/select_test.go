package bench

// The Go runtime's select benchmarks (SelectNonblock is in runtime_test.go)
// and the select row of BenchmarkBar. Select works on *chans.Chan values, so
// these use native channels and chans.Chan directly rather than Queue. The
// chans side builds its cases once per goroutine, outside the loop, and calls
// chans.Select, as a user would; where the runtime's version selects on a
// timer that never fires, both sides select on an idle channel instead.

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/workload"
)

func init() { barSelect = benchSelectQuit }

// runNativeChans runs the native and the chans version of a select
// benchmark as impl=native and impl=chans, with allocation reporting on.
func runNativeChans(b *testing.B, suffix string, native, chn func(b *testing.B)) {
	b.Run("impl=native"+suffix, func(b *testing.B) { b.ReportAllocs(); native(b) })
	b.Run("impl=chans"+suffix, func(b *testing.B) { b.ReportAllocs(); chn(b) })
}

// BenchmarkSelectUncontended: every P bounces a token between its own two
// channels of capacity 1; one op is a two-case select that receives it and a
// send that passes it on.
func BenchmarkSelectUncontended(b *testing.B) {
	runNativeChans(b, "", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			c1, c2 := make(chan int, 1), make(chan int, 1)
			c1 <- 0
			for pb.Next() {
				select {
				case <-c1:
					c2 <- 0
				case <-c2:
					c1 <- 0
				}
			}
		})
	}, func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			c1, c2 := chans.New[int](1), chans.New[int](1)
			c1.Send(0)
			cases := []chans.Case{chans.OnRecv(c1, nil), chans.OnRecv(c2, nil)}
			for pb.Next() {
				if chans.Select(cases...) == 0 {
					c2.Send(0)
				} else {
					c1.Send(0)
				}
			}
		})
	})
}

// BenchmarkSelectSyncContended: three shared rendezvous channels and a done
// channel; every P runs a receiver doing its share of the b.N three-case
// receive selects, and a sender that selects over sending on each of the
// three and receiving from done, until done is closed.
func BenchmarkSelectSyncContended(b *testing.B) {
	// run starts a sender and a receiver per P; newSend and newRecv return
	// one goroutine's select, built before the clock starts; stop ends the
	// senders.
	run := func(b *testing.B, newSend func() func() bool, newRecv func() func(), stop func()) {
		p := procs()
		var senders, receivers sync.WaitGroup
		start := make(chan struct{})
		for i := range p {
			n, send, recv := share(b.N, p, i), newSend(), newRecv()
			senders.Add(1)
			receivers.Add(1)
			go func() {
				defer senders.Done()
				<-start
				for send() {
				}
			}()
			go func() {
				defer receivers.Done()
				<-start
				for range n {
					recv()
				}
			}()
		}
		b.ResetTimer()
		close(start)
		receivers.Wait()
		b.StopTimer()
		stop()
		senders.Wait()
	}
	runNativeChans(b, "", func(b *testing.B) {
		c1, c2, c3, done := make(chan int), make(chan int), make(chan int), make(chan int)
		run(b, func() func() bool {
			return func() bool {
				select {
				case c1 <- 0:
				case c2 <- 0:
				case c3 <- 0:
				case <-done:
					return false
				}
				return true
			}
		}, func() func() {
			return func() {
				select {
				case <-c1:
				case <-c2:
				case <-c3:
				}
			}
		}, func() { close(done) })
	}, func(b *testing.B) {
		c1, c2, c3, done := chans.New[int](0), chans.New[int](0), chans.New[int](0), chans.New[int](0)
		run(b, func() func() bool {
			cases := []chans.Case{chans.OnSend(c1, 0, nil), chans.OnSend(c2, 0, nil), chans.OnSend(c3, 0, nil), chans.OnRecv(done, nil)}
			return func() bool { return chans.Select(cases...) != 3 }
		}, func() func() {
			cases := []chans.Case{chans.OnRecv(c1, nil), chans.OnRecv(c2, nil), chans.OnRecv(c3, nil)}
			return func() { chans.Select(cases...) }
		}, func() { done.Close() })
	})
}

// BenchmarkSelectAsyncContended: two shared channels of capacity GOMAXPROCS;
// every P puts a token in the first and then, each op, selects over both and
// passes what it got to the other.
func BenchmarkSelectAsyncContended(b *testing.B) {
	runNativeChans(b, "", func(b *testing.B) {
		c1, c2 := make(chan int, procs()), make(chan int, procs())
		b.RunParallel(func(pb *testing.PB) {
			c1 <- 0
			for pb.Next() {
				select {
				case <-c1:
					c2 <- 0
				case <-c2:
					c1 <- 0
				}
			}
		})
	}, func(b *testing.B) {
		c1, c2 := chans.New[int](procs()), chans.New[int](procs())
		b.RunParallel(func(pb *testing.PB) {
			cases := []chans.Case{chans.OnRecv(c1, nil), chans.OnRecv(c2, nil)}
			c1.Send(0)
			for pb.Next() {
				if chans.Select(cases...) == 0 {
					c2.Send(0)
				} else {
					c1.Send(0)
				}
			}
		})
	})
}

// selectProdCons moves b.N messages from P producers to P consumers over one
// channel of the given capacity. With sendSelect (the runtime's shape),
// producers send through a select over the send, an idle channel of their own
// and a shared close channel, and consumers receive through a select over the
// same three; without it (the bar's), producers send plainly and consumers
// select over the work channel and an idle quit channel of their own. Each side does local work per message: fixed Spin iterations, or
// geometric of that mean (workload.Work) when geometric is set.
func selectProdCons(b *testing.B, native bool, capacity, localWork int, geometric, sendSelect bool) {
	if geometric && localWork > 0 {
		workload.Calibrate()
	}
	p := procs()
	var (
		prod, cons sync.WaitGroup
		got        atomic.Int64
		start      = make(chan struct{})
		nwork      = make(chan int, capacity)
		cwork      = chans.New[int](capacity)
		nclose     = make(chan int) // the runtime's myclose, never closed during the run
		cclose     = chans.New[int](0)
	)
	worker := func(seed int, step func() bool) func() {
		w := workload.NewWork(localWork, uint64(seed)+1)
		return func() {
			var x uint64
			for step() {
				if geometric {
					w.Do()
				} else {
					x += workload.Spin(localWork)
				}
			}
			runtime.KeepAlive(x)
		}
	}
	for i := range p {
		n, k := share(b.N, p, i), new(workload.Owned[int])
		var send func()
		switch {
		case native && sendSelect:
			idle := make(chan int) // the runtime's timer that never fires
			send = func() {
				select {
				case nwork <- 1:
				case <-idle:
				case <-nclose:
				}
			}
		case native:
			send = func() { nwork <- 1 }
		case sendSelect:
			cases := []chans.Case{chans.OnSend(cwork, 1, nil), chans.OnRecv(chans.New[int](0), nil), chans.OnRecv(cclose, nil)}
			send = func() { chans.Select(cases...) }
		default:
			send = func() { cwork.Send(1) }
		}
		loop := worker(i, func() bool {
			if k.V == n {
				return false
			}
			k.V++
			send()
			return true
		})
		prod.Add(1)
		go func() {
			defer prod.Done()
			<-start
			loop()
		}()
	}
	for i := range p {
		var recv func() bool // false once the work channel is closed and drained
		switch {
		case native && sendSelect:
			idle := make(chan int)
			recv = func() bool {
				select {
				case _, ok := <-nwork:
					return ok
				case <-idle:
				case <-nclose:
				}
				return true
			}
		case native:
			quit := make(chan int)
			recv = func() bool {
				select {
				case _, ok := <-nwork:
					return ok
				case <-quit:
				}
				return true
			}
		default:
			ok := new(workload.Owned[bool])
			cases := []chans.Case{chans.OnRecv(cwork, func(_ int, o bool) { ok.V = o }), chans.OnRecv(chans.New[int](0), nil)}
			if sendSelect {
				cases = append(cases, chans.OnRecv(cclose, nil))
			}
			recv = func() bool { return chans.Select(cases...) != 0 || ok.V }
		}
		k := new(workload.Owned[int])
		loop := worker(p+i, func() bool {
			if !recv() {
				return false
			}
			k.V++
			return true
		})
		cons.Add(1)
		go func() {
			defer cons.Done()
			<-start
			loop()
			got.Add(int64(k.V))
		}()
	}
	b.ResetTimer()
	close(start)
	prod.Wait()
	if native {
		close(nwork)
	} else {
		cwork.Close()
	}
	cons.Wait()
	b.StopTimer()
	if got.Load() != int64(b.N) {
		b.Fatalf("received %d, want %d", got.Load(), b.N)
	}
}

// BenchmarkSelectProdCons: the runtime's select producer-consumer: capacity
// 128, 100 units of local work per message on each side, producers and
// consumers each selecting over their operation, an idle channel (the
// runtime's timer) and a shared close channel.
func BenchmarkSelectProdCons(b *testing.B) {
	runNativeChans(b, "", func(b *testing.B) {
		selectProdCons(b, true, 128, 100, false, true)
	}, func(b *testing.B) {
		selectProdCons(b, false, 128, 100, false, true)
	})
}

// BenchmarkSelectProdCons0 is BenchmarkSelectProdCons on 64 slots without
// local work: producers and consumers each select over their operation, an
// idle channel and a shared close channel, so that the cost of the selects
// shows.
func BenchmarkSelectProdCons0(b *testing.B) {
	runNativeChans(b, "", func(b *testing.B) {
		selectProdCons(b, true, 64, 0, false, true)
	}, func(b *testing.B) {
		selectProdCons(b, false, 64, 0, false, true)
	})
}

// benchSelectQuit is BenchmarkBar's select row: P producers sending plainly,
// P consumers selecting over the work channel (capacity 64) and an idle quit
// channel each (seed 001's cancellation check), no local work.
func benchSelectQuit(b *testing.B) {
	runNativeChans(b, "/cap=64/work=0/g=P", func(b *testing.B) {
		selectProdCons(b, true, 64, 0, true, false)
	}, func(b *testing.B) {
		selectProdCons(b, false, 64, 0, true, false)
	})
}
