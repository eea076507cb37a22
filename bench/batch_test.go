package bench

import (
	"sync"
	"testing"

	"github.com/scalable-go/chans"
)

// BenchmarkBatch measures batch operations against the same traffic moved
// one value at a time, with chans and with native channels (which have no
// batch form: a loop of sends or receives is what a user writes):
//
//	go test ./bench -run '^$' -bench '^BenchmarkBatch$' -count 10 -cpu 1,2 -timeout 0 > batch.txt
//	go run golang.org/x/perf/cmd/benchstat -col /impl batch.txt
//
// One op is one value. Rows:
//   - spsc/cap=1024/batch=64: one producer and one consumer; impl=native and
//     impl=chans loop over single sends and receives, impl=chans-batch sends
//     with SendMany and receives with RecvMany, 64 values at a time.
//   - sparse/cap=1024/batch=64: one producer sending single values, one
//     consumer asking for 64 at a time (RecvMany for chans-batch; a Recv
//     then TryRecv until empty for the others): the channel mostly holds a
//     few values, so a batch must not cost more than the values it gets.
func BenchmarkBatch(b *testing.B) {
	const capacity, batch = 1024, 64
	for _, row := range []struct {
		name        string
		batchedSend bool
	}{{"spsc", true}, {"sparse", false}} {
		for _, im := range []string{"native", "chans", "chans-batch"} {
			b.Run(sub("%s/impl=%s/cap=%d/batch=%d", row.name, im, capacity, batch), func(b *testing.B) {
				b.ReportAllocs()
				switch im {
				case "native":
					batchNative(b, capacity, batch, row.batchedSend)
				case "chans":
					batchChans(b, capacity, batch, row.batchedSend, false)
				default:
					batchChans(b, capacity, batch, row.batchedSend, true)
				}
			})
		}
	}
}

// batchNative moves b.N values from one producer to one consumer through a
// native channel; the consumer receives up to batch values per round (one
// blocking receive, then non-blocking ones), as a batching consumer would.
func batchNative(b *testing.B, capacity, batch int, _ bool) {
	c := make(chan int, capacity)
	var wg sync.WaitGroup
	wg.Add(1)
	b.ResetTimer()
	go func() {
		defer wg.Done()
		for v := 1; v <= b.N; v++ {
			c <- v
		}
		close(c)
	}()
	sum, n := 0, 0
	for {
		v, ok := <-c
		if !ok {
			break
		}
		sum += v
		n++
	drain:
		for k := 1; k < batch; k++ {
			select {
			case v, ok := <-c:
				if !ok {
					break drain
				}
				sum += v
				n++
			default:
				break drain
			}
		}
	}
	b.StopTimer()
	wg.Wait()
	checkSum(b, n, sum)
}

// batchChans is batchNative on a chans channel; with batched, the consumer
// uses RecvMany and (if batchedSend) the producer SendMany.
func batchChans(b *testing.B, capacity, batch int, batchedSend, batched bool) {
	c := chans.New[int](capacity)
	var wg sync.WaitGroup
	wg.Add(1)
	b.ResetTimer()
	go func() {
		defer wg.Done()
		if batched && batchedSend {
			vs := make([]int, batch)
			for v := 1; v <= b.N; {
				k := min(batch, b.N-v+1)
				for i := range k {
					vs[i] = v + i
				}
				if n, err := c.SendMany(vs[:k]); n != k || err != nil {
					panic("SendMany failed")
				}
				v += k
			}
		} else {
			for v := 1; v <= b.N; v++ {
				c.Send(v)
			}
		}
		c.Close()
	}()
	sum, n := 0, 0
	if batched {
		dst := make([]int, batch)
		for {
			k, err := c.RecvMany(dst)
			if err != nil {
				break
			}
			for _, v := range dst[:k] {
				sum += v
			}
			n += k
		}
	} else {
		for {
			v, ok := c.Recv()
			if !ok {
				break
			}
			sum += v
			n++
			for k := 1; k < batch; k++ {
				v, err := c.TryRecv()
				if err != nil {
					break
				}
				sum += v
				n++
			}
		}
	}
	b.StopTimer()
	wg.Wait()
	checkSum(b, n, sum)
}

func checkSum(b *testing.B, n, sum int) {
	if n != b.N || sum != b.N*(b.N+1)/2 {
		b.Fatalf("received %d values summing to %d, want %d summing to %d", n, sum, b.N, b.N*(b.N+1)/2)
	}
}
