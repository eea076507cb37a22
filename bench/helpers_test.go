package bench

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/workload"
)

// unbounded is chans.Unbounded, spelled cap=unbounded in names.
const unbounded = chans.Unbounded

func capName(c int) string {
	if c == unbounded {
		return "unbounded"
	}
	return strconv.Itoa(c)
}

// gP stands for "one goroutine per P" in goroutine-count lists; its name is
// g=P, so that results at different -cpu values line up in benchstat.
const gP = 0

func gName(g int) string {
	if g == gP {
		return "P"
	}
	return strconv.Itoa(g)
}

// runImpls runs f as a sub-benchmark named prefix+"impl=<name>"+suffix for each
// implementation, native first, with allocation reporting on.
func runImpls(b *testing.B, prefix, suffix string, list []Impl, f func(b *testing.B, im Impl)) {
	for _, im := range list {
		b.Run(prefix+"impl="+im.Name+suffix, func(b *testing.B) {
			b.ReportAllocs()
			f(b, im)
		})
	}
}

// share returns the part of n that worker i of k does.
func share(n, k, i int) int {
	s := n / k
	if i < n%k {
		s++
	}
	return s
}

func procs() int { return runtime.GOMAXPROCS(0) }

// prodCons moves b.N messages through one queue of the given capacity from
// producers to consumers (each with its own Local access path), with
// geometric local work of mean work units (about 1 ns each) before every send
// and after every receive. Setup, including the goroutines and a native
// "unbounded" buffer of b.N elements, is outside the timed region; the clock
// stops when the last consumer has seen the close.
func prodCons(b *testing.B, im Impl, capacity, producers, consumers, work int) {
	prodConsTry(b, im, capacity, producers, consumers, work, false, false)
}

// prodConsTry is prodCons whose producers (trySend) or consumers (tryRecv)
// first try each operation without blocking (TrySend, TryRecv), and block
// in Send or Recv only when the try fails.
func prodConsTry(b *testing.B, im Impl, capacity, producers, consumers, work int, trySend, tryRecv bool) {
	if work > 0 {
		workload.Calibrate()
	}
	q := im.New(capacity, b.N)
	var (
		prod, cons sync.WaitGroup
		got, sum   atomic.Int64
		want       int64
		start      = make(chan struct{})
	)
	for i := range producers {
		n := share(b.N, producers, i)
		want += int64(n) * int64(n+1) / 2
		l, w := q.Local(), workload.NewWork(work, uint64(i)+1)
		prod.Add(1)
		go func() {
			defer prod.Done()
			<-start
			for v := 1; v <= n; v++ {
				w.Do()
				if !trySend || !l.TrySend(v) {
					l.Send(v)
				}
			}
		}()
	}
	for i := range consumers {
		l, w := q.Local(), workload.NewWork(work, uint64(producers+i)+1)
		cons.Add(1)
		go func() {
			defer cons.Done()
			<-start
			k, s := 0, 0
			for {
				var v int
				ok := false
				if tryRecv {
					v, ok = l.TryRecv()
				}
				if !ok {
					if v, ok = l.Recv(); !ok {
						break
					}
				}
				k++
				s += v
				w.Do()
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

// mpmc runs prodCons with g goroutines in all, half producing and half
// consuming; g == gP means P producers and P consumers.
func mpmc(b *testing.B, im Impl, capacity, g, work int) {
	if g == gP {
		g = 2 * procs()
	}
	p := max(1, g/2)
	prodCons(b, im, capacity, p, max(1, g-p), work)
}

// pingPong bounces a value between two goroutines over two queues of the
// given capacity; each one-way hop is one op. With work > 0 each side does
// about that many nanoseconds of geometric local work before each send, as
// chanbench's ping-pong does.
func pingPong(b *testing.B, im Impl, capacity, work int) {
	if work > 0 {
		workload.Calibrate()
	}
	ab, ba := im.New(capacity, b.N), im.New(capacity, b.N)
	aSend, aRecv, bRecv, bSend := ab.Local(), ba.Local(), ab.Local(), ba.Local()
	wa, wb := workload.NewWork(work, 1), workload.NewWork(work, 2)
	n := b.N
	var wg sync.WaitGroup
	var bad atomic.Int64
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		for h := 0; h < n; h += 2 {
			wa.Do()
			aSend.Send(h)
			if h+1 < n {
				if v, ok := aRecv.Recv(); !ok || v != h+1 {
					bad.Add(1)
				}
			}
		}
		ab.Close()
	}()
	go func() {
		defer wg.Done()
		<-start
		for want := 0; ; want += 2 {
			v, ok := bRecv.Recv()
			if !ok {
				break
			}
			if v != want {
				bad.Add(1)
			}
			if v+1 < n {
				wb.Do()
				bSend.Send(v + 1)
			}
		}
	}()
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
	ba.Close()
	if bad.Load() != 0 {
		b.Fatalf("%d hops out of order", bad.Load())
	}
}

// parallel runs body(i, n) on g goroutines (g == gP: GOMAXPROCS), goroutine
// i doing n of the b.N ops, all released together after the timer reset.
func parallel(b *testing.B, g int, body func(i, n int)) {
	if g == gP {
		g = procs()
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range g {
		n := share(b.N, g, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body(i, n)
		}()
	}
	b.ResetTimer()
	close(start)
	wg.Wait()
	b.StopTimer()
}

// failRecv does b.N failing TryRecv on an empty queue from GOMAXPROCS
// goroutines.
func failRecv(b *testing.B, im Impl, capacity int) {
	q := im.New(capacity, 1024)
	locals := make([]Queue, procs())
	for i := range locals {
		locals[i] = q.Local()
	}
	var got atomic.Int64
	parallel(b, gP, func(i, n int) { got.Add(int64(locals[i].TryRecvN(n))) })
	q.Close()
	if got.Load() != 0 {
		b.Fatalf("%d TryRecv on an empty channel succeeded", got.Load())
	}
}

// failSend does b.N failing TrySend on a full queue from GOMAXPROCS
// goroutines.
func failSend(b *testing.B, im Impl, capacity int) {
	q := im.New(capacity, 0)
	for v := range capacity {
		q.Send(v)
	}
	locals := make([]Queue, procs())
	for i := range locals {
		locals[i] = q.Local()
	}
	var got atomic.Int64
	parallel(b, gP, func(i, n int) { got.Add(int64(locals[i].TrySendN(n))) })
	q.Close()
	if got.Load() != 0 {
		b.Fatalf("%d TrySend on a full channel succeeded", got.Load())
	}
}

// pairs does b.N send+receive pairs on one queue from one goroutine.
func pairs(b *testing.B, im Impl, capacity int) {
	q := im.New(capacity, 1)
	b.ResetTimer()
	sum := q.PairsN(b.N)
	b.StopTimer()
	q.Close()
	if want := b.N * (b.N + 1) / 2; sum != want {
		b.Fatalf("pairs received values summing to %d, want %d", sum, want)
	}
}

// faa is the physical floor: b.N atomic adds on one shared counter, alone on
// its cache lines, from g goroutines.
func faa(b *testing.B, g int) {
	ctr := new(workload.Owned[atomic.Uint64])
	parallel(b, g, func(_, n int) {
		for range n {
			ctr.V.Add(1)
		}
	})
	if got := ctr.V.Load(); got != uint64(b.N) {
		b.Fatalf("counter reached %d, want %d", got, b.N)
	}
}

func sub(format string, args ...any) string { return fmt.Sprintf(format, args...) }
