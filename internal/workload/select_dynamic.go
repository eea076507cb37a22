package workload

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/scalable-go/chans"
)

// dynamicIdx is the sequence of channels that select-dynamic-N makes ready,
// one per select, the same for every implementation and run.
func dynamicIdx(n int) []int {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	idx := make([]int, 4096)
	for i := range idx {
		idx[i] = r.IntN(n)
	}
	return idx
}

// runSelectDynamic is select-dynamic-N: one goroutine selects over a list
// of n channels of capacity 1, built at run time, after sending a value on
// one of them chosen at random: through a chans.Selector built once (chans
// and chans-handle alike, select takes Chans), or reflect.Select over
// native channels with its list of cases built once (native). Each select
// is one message; each must return the channel that was sent on, with the
// value.
func runSelectDynamic(n int) func(cfg Config) (Result, error) {
	return func(cfg Config) (Result, error) {
		idx := dynamicIdx(n)
		mask := len(idx) - 1
		var sel func(k, v int) bool // sends v on channel k, selects, and reports the select right
		switch cfg.Impl {
		case Native:
			chs := make([]chan int, n)
			cases := make([]reflect.SelectCase, n)
			for i := range chs {
				chs[i] = make(chan int, 1)
				cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(chs[i])}
			}
			sel = func(k, v int) bool {
				chs[k] <- v
				j, got, ok := reflect.Select(cases)
				return j == k && ok && got.Int() == int64(v)
			}
		case Chans, ChansHandle:
			chs := make([]*chans.Chan[int], n)
			cases := make([]chans.Case, n)
			var got int
			for i := range chs {
				chs[i] = chans.New[int](1)
				cases[i] = chans.OnRecv(chs[i], func(v int, _ bool) { got = v })
			}
			s := chans.NewSelector(cases...)
			sel = func(k, v int) bool {
				_ = chs[k].Send(v)
				return s.Select() == k && got == v
			}
		default:
			return Result{}, checkImpl(cfg.Impl)
		}
		sel(0, 0) // warm: a Selector allocates on its first call
		bad := 0
		done := make(chan struct{})
		g := newGate()
		go func() {
			defer close(done)
			g.wait()
			for i := range cfg.Messages {
				if !sel(idx[i&mask], i) {
					bad++
				}
			}
		}()
		t := g.start()
		<-done
		r := Result{Elapsed: time.Since(t), Messages: cfg.Messages}
		if bad != 0 {
			return r, fmt.Errorf("workload select-dynamic-%d/%s: %d of %d selects returned the wrong channel or value", n, cfg.Impl, bad, cfg.Messages)
		}
		return r, nil
	}
}

func selectDynamicDoc(n int) string {
	return fmt.Sprintf("one goroutine selecting over a list of %d channels built at run time, after sending on a random one: a Selector for chans, reflect.Select for native; each select is one message", n)
}
