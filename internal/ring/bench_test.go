package ring_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/ring"
)

// BenchmarkRing compares the ring with native channels and chans on the
// rows of the library's bar that a buffered channel serves; one op is one
// message. pair: a send and a receive by one goroutine on 64 slots; mpmc: g
// producers and g consumers (g = GOMAXPROCS, or 500 each).
//
//	go test ./internal/ring -run '^$' -bench BenchmarkRing -count 10 -cpu 1,2 -benchmem > ring.txt
//	go run golang.org/x/perf/cmd/benchstat -col /impl ring.txt
func BenchmarkRing(b *testing.B) {
	b.Run("pair/impl=native/cap=64", func(b *testing.B) {
		b.ReportAllocs()
		c := make(chan int, 64)
		for i := 0; i < b.N; i++ {
			c <- i
			<-c
		}
	})
	b.Run("pair/impl=ring/cap=64", func(b *testing.B) {
		b.ReportAllocs()
		c := ring.New[int](64)
		for i := 0; i < b.N; i++ {
			c.Send(i)
			c.Recv()
		}
	})
	b.Run("pair/impl=chans/cap=64", func(b *testing.B) {
		b.ReportAllocs()
		c := chans.New[int](64)
		for i := 0; i < b.N; i++ {
			c.Send(i)
			c.Recv()
		}
	})
	for _, capacity := range []int{64, 1024} {
		for _, many := range []bool{false, true} {
			g, name := runtime.GOMAXPROCS(0), "P"
			if many {
				g, name = 500, "1000"
			}
			row := fmt.Sprintf("cap=%d/g=%s", capacity, name)
			b.Run("mpmc/impl=native/"+row, func(b *testing.B) {
				c := make(chan int, capacity)
				mpmc(b, g, func(v int) { c <- v }, func() { <-c })
			})
			b.Run("mpmc/impl=ring/"+row, func(b *testing.B) {
				c := ring.New[int](capacity)
				mpmc(b, g, func(v int) { c.Send(v) }, func() { c.Recv() })
			})
			b.Run("mpmc/impl=chans/"+row, func(b *testing.B) {
				c := chans.New[int](capacity)
				mpmc(b, g, func(v int) { c.Send(v) }, func() { c.Recv() })
			})
		}
	}
}

// mpmc moves b.N values from g producers to g consumers.
func mpmc(b *testing.B, g int, send func(int), recv func()) {
	b.ReportAllocs()
	var wg sync.WaitGroup
	for i := range g {
		n := b.N / g
		if i < b.N%g {
			n++
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			for k := range n {
				send(k)
			}
		}()
		go func() {
			defer wg.Done()
			for range n {
				recv()
			}
		}()
	}
	wg.Wait()
}
