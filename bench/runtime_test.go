package bench

// The Go runtime's channel benchmarks (src/runtime/chan_test.go), whose
// before/after table seed 004 annotates, written afresh from their
// descriptions on the Queue interface. The select benchmarks are in
// select_test.go; SelectNonblock is here because every one of its selects has
// a single case and a default, which is what TryRecv and TrySend are.

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans/internal/workload"
)

// BenchmarkChanNonblocking: every P polls one shared empty rendezvous channel
// with a non-blocking receive.
func BenchmarkChanNonblocking(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) {
		q := im.New(0, 0)
		b.RunParallel(func(pb *testing.PB) {
			l := q.Local()
			for pb.Next() {
				l.TryRecv()
			}
		})
	})
}

// callsPerOp is the batch of the runtime's ChanUncontended and ChanContended:
// one op is this many sends followed by as many receives.
const callsPerOp = 100

func sendRecvBatch(l Queue) {
	for i := range callsPerOp {
		l.Send(i)
	}
	for range callsPerOp {
		l.Recv()
	}
}

// BenchmarkChanUncontended: every P fills and drains its own channel of
// capacity 100.
func BenchmarkChanUncontended(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) {
		b.RunParallel(func(pb *testing.PB) {
			l := im.New(callsPerOp, 0)
			for pb.Next() {
				sendRecvBatch(l)
			}
		})
	})
}

// BenchmarkChanContended: every P fills and drains by 100 one shared channel
// with room for all of them.
func BenchmarkChanContended(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) {
		q := im.New(callsPerOp*procs(), 0)
		b.RunParallel(func(pb *testing.PB) {
			l := q.Local()
			for pb.Next() {
				sendRecvBatch(l)
			}
		})
	})
}

// BenchmarkChanSync: two goroutines exchange values over one rendezvous
// channel, one sending first and the other receiving first; one op is one
// send and one receive by one goroutine.
func BenchmarkChanSync(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) {
		q := im.New(0, 0)
		l0, l1 := q.Local(), q.Local()
		n := (b.N + 1) / 2
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			for range n {
				l0.Send(0)
				l0.Recv()
			}
		}()
		go func() {
			defer wg.Done()
			<-start
			for range n {
				l1.Recv()
				l1.Send(0)
			}
		}()
		b.ResetTimer()
		close(start)
		wg.Wait()
	})
}

// prodConsFixed is the runtime's producer-consumer: P producers and P
// consumers, a fixed amount of local work (Spin iterations, about 1 ns each)
// per message on each side.
func prodConsFixed(b *testing.B, im Impl, capacity, localWork int) {
	p := procs()
	q := im.New(capacity, 0)
	var wg sync.WaitGroup
	var got atomic.Int64
	var sink atomic.Uint64
	start := make(chan struct{})
	for i := range p {
		n, l := share(b.N, p, i), q.Local()
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			x := uint64(0)
			for range n {
				x += workload.Spin(localWork)
				l.Send(1)
			}
			sink.Add(x)
		}()
	}
	var cons sync.WaitGroup
	for range p {
		l := q.Local()
		cons.Add(1)
		go func() {
			defer cons.Done()
			<-start
			k, x := 0, uint64(0)
			for {
				if _, ok := l.Recv(); !ok {
					break
				}
				k++
				x += workload.Spin(localWork)
			}
			got.Add(int64(k))
			sink.Add(x)
		}()
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
	q.Close()
	cons.Wait()
	b.StopTimer()
	if got.Load() != int64(b.N) {
		b.Fatalf("received %d, want %d", got.Load(), b.N)
	}
}

func BenchmarkChanProdCons0(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) { prodConsFixed(b, im, 0, 0) })
}

func BenchmarkChanProdCons10(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) { prodConsFixed(b, im, 10, 0) })
}

func BenchmarkChanProdCons100(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) { prodConsFixed(b, im, 100, 0) })
}

func BenchmarkChanProdConsWork0(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) { prodConsFixed(b, im, 0, 100) })
}

func BenchmarkChanProdConsWork10(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) { prodConsFixed(b, im, 10, 100) })
}

func BenchmarkChanProdConsWork100(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) { prodConsFixed(b, im, 100, 100) })
}

// BenchmarkChanSem: a channel of capacity GOMAXPROCS used as a counting
// semaphore; one op is an acquire (send) and a release (receive).
func BenchmarkChanSem(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) {
		q := im.New(procs(), 0)
		b.RunParallel(func(pb *testing.PB) {
			l := q.Local()
			for pb.Next() {
				l.Send(0)
				l.Recv()
			}
		})
	})
}

// BenchmarkChanCreation: every op makes a channel of capacity 1, sends on it
// and receives from it.
func BenchmarkChanCreation(b *testing.B) {
	runImpls(b, "", "", chanImpls, func(b *testing.B, im Impl) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				q := im.New(1, 0)
				q.Send(0)
				q.Recv()
			}
		})
	})
}

// BenchmarkSelectNonblock: every P makes four private channels, rendezvous
// and capacity 1, and does a failing or succeeding non-blocking receive and
// send on them. In the runtime's version each is a one-case select with a
// default, which the compiler turns into exactly these non-blocking calls.
func BenchmarkSelectNonblock(b *testing.B) {
	runImpls(b, "", "", impls, func(b *testing.B, im Impl) {
		b.RunParallel(func(pb *testing.PB) {
			q1, q2, q3, q4 := im.New(0, 0), im.New(0, 0), im.New(1, 0), im.New(1, 0)
			for pb.Next() {
				q1.TryRecv()
				q2.TrySend(0)
				q3.TryRecv()
				q4.TrySend(0)
			}
		})
	})
}
