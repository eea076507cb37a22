package bench

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/scalable-go/chans"
)

// BenchmarkSelectDynamic: one goroutine selects over a list of n channels
// of capacity 1 built at run time, after sending a value on one of them
// chosen at random (the same sequence for both): a chans.Selector built
// once against reflect.Select over native channels, whose list of cases is
// also built once. One op is the send and the select.
func BenchmarkSelectDynamic(b *testing.B) {
	for _, n := range []int{4, 16, 128, 1024} {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		idx := make([]int, 4096)
		for i := range idx {
			idx[i] = r.IntN(n)
		}
		mask := len(idx) - 1
		b.Run(fmt.Sprintf("n=%d/impl=reflect", n), func(b *testing.B) {
			b.ReportAllocs()
			chs := make([]chan int, n)
			cases := make([]reflect.SelectCase, n)
			for i := range chs {
				chs[i] = make(chan int, 1)
				cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(chs[i])}
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := idx[i&mask]
				chs[k] <- i
				if j, _, _ := reflect.Select(cases); j != k {
					b.Fatalf("reflect.Select chose %d, want %d", j, k)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/impl=chans", n), func(b *testing.B) {
			b.ReportAllocs()
			chs := make([]*chans.Chan[int], n)
			cases := make([]chans.Case, n)
			for i := range chs {
				chs[i] = chans.New[int](1)
				cases[i] = chans.OnRecv(chs[i], nil)
			}
			sel := chans.NewSelector(cases...)
			_ = chs[0].Send(0)
			sel.Select() // its first call allocates
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				k := idx[i&mask]
				_ = chs[k].Send(i)
				if j := sel.Select(); j != k {
					b.Fatalf("Selector chose %d, want %d", j, k)
				}
			}
		})
	}
}
