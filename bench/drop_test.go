package bench

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkTrySendDrop: P producers offer values with TrySend, drop those
// that find the buffer full and then yield the processor (telemetry,
// sampling, load shedding; on a rendezvous channel, handing work to an
// idle worker or doing it elsewhere); P consumers receive. One op is one
// offer, delivered or dropped; delivered/op is the share delivered. On the segmented array two TrySends that
// saw one free slot once both took a slot, and the second gave its slot up:
// the channel's first hole, after which it allocated about 19 B per
// message for good.
//
//	go test ./bench -run '^$' -bench '^BenchmarkTrySendDrop$' -count 10 -cpu 1,2 > drop.txt
//	go run golang.org/x/perf/cmd/benchstat -col /impl drop.txt
func BenchmarkTrySendDrop(b *testing.B) {
	for _, c := range []int{0, 1, 64} {
		runImpls(b, "", sub("/cap=%d/g=P", c), chanImpls, func(b *testing.B, im Impl) {
			trySendDrop(b, im, c)
		})
	}
}

// trySendDrop runs P producers that offer b.N values in all with TrySend,
// dropping those that find no room and yielding after each, against P
// consumers, and checks that the consumers received exactly the values
// delivered.
func trySendDrop(b *testing.B, im Impl, capacity int) {
	q := im.New(capacity, b.N)
	p := procs()
	var (
		prod, cons      sync.WaitGroup
		delivered, sent atomic.Int64
		got, sum        atomic.Int64
		start           = make(chan struct{})
	)
	for i := range p {
		n := share(b.N, p, i)
		l := q.Local()
		prod.Add(1)
		go func() {
			defer prod.Done()
			<-start
			k, s := 0, 0
			for v := 1; v <= n; v++ {
				if l.TrySend(v) {
					k++
					s += v
				} else {
					runtime.Gosched()
				}
			}
			delivered.Add(int64(k))
			sent.Add(int64(s))
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
				v, ok := l.Recv()
				if !ok {
					break
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
	if got.Load() != delivered.Load() || sum.Load() != sent.Load() {
		b.Fatalf("received %d values summing to %d; TrySend delivered %d summing to %d", got.Load(), sum.Load(), delivered.Load(), sent.Load())
	}
	b.ReportMetric(float64(delivered.Load())/float64(b.N), "delivered/op")
}
