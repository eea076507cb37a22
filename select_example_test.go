package chans_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/scalable-go/chans"
)

// A worker loop over a work channel and a quit channel, the commonest
// select in services. The Selector is built once and reused: its Select
// allocates nothing once it has run.
func ExampleSelector() {
	work := chans.New[int](16)
	quit := chans.New[struct{}](0)
	go func() {
		for i := 1; i <= 3; i++ {
			_ = work.Send(i)
		}
		_ = work.Close()
	}()

	sum, done := 0, false
	sel := chans.NewSelector(
		chans.OnRecv(work, func(v int, ok bool) {
			if !ok {
				done = true // work closed and drained
				return
			}
			sum += v
		}),
		chans.OnRecv(quit, func(struct{}, bool) { done = true }),
	)
	for !done {
		sel.Select()
	}
	fmt.Println("sum:", sum)
	// Output: sum: 6
}

// Select runs the callback of the case it commits, in the calling
// goroutine, and returns its index. A send case reports ErrClosed if its
// channel is closed.
func ExampleSelect() {
	in := chans.New[string](1)
	out := chans.New[string](1)
	_ = in.Send("hello")
	_ = out.Close()

	for i := 0; i < 2; i++ {
		j := chans.Select(
			chans.OnRecv(in, func(v string, ok bool) { fmt.Println("received", v) }),
			chans.OnSend(out, "bye", func(err error) { fmt.Println("send:", err) }),
		)
		if j == 0 {
			in = nil // a case on a nil channel is never ready
		} else {
			out = nil
		}
	}
	// Unordered output:
	// received hello
	// send: chans: channel closed
}

// Select takes its cases as a list, so the channels it waits on can be
// chosen at run time: here a fan-in over any number of inputs, each dropped
// from the list once it is closed and drained.
func ExampleSelect_dynamic() {
	inputs := make([]*chans.Chan[int], 3)
	for i := range inputs {
		inputs[i] = chans.New[int](1)
		_ = inputs[i].Send(10 * (i + 1))
		_ = inputs[i].Close()
	}

	sum, drained := 0, false
	cases := make([]chans.Case, len(inputs))
	for i, in := range inputs {
		cases[i] = chans.OnRecv(in, func(v int, ok bool) {
			sum += v // v is 0 when ok is false
			drained = !ok
		})
	}
	for len(cases) > 0 {
		if j := chans.Select(cases...); drained {
			cases = slices.Delete(cases, j, j+1)
		}
	}
	fmt.Println("sum:", sum)
	// Output: sum: 60
}

// TrySelect never blocks: it reports (-1, false) when no case is ready.
func ExampleTrySelect() {
	c := chans.New[int](1)
	j, ok := chans.TrySelect(chans.OnRecv(c, nil))
	fmt.Println(j, ok)
	_ = c.Send(42)
	j, ok = chans.TrySelect(chans.OnRecv(c, func(v int, _ bool) { fmt.Println("got", v) }))
	fmt.Println(j, ok)
	// Output:
	// -1 false
	// got 42
	// 0 true
}

// SelectContext gives up when its context is done; then no case took effect.
func ExampleSelectContext() {
	c := chans.New[int](0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j, err := chans.SelectContext(ctx, chans.OnRecv(c, nil), chans.OnSend(c, 1, nil))
	fmt.Println(j, err)
	// Output: -1 context canceled
}

// A pool of workers that stops when its context is cancelled and leaves no
// goroutine behind: each worker selects over the job channel and the
// context's Done channel, and the pool waits for every worker to return.
func ExampleOnDone() {
	ctx, cancel := context.WithCancel(context.Background())
	jobs := chans.New[int](0)
	results := chans.New[int](chans.Unbounded)

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stop := false
			sel := chans.NewSelector(
				chans.OnRecv(jobs, func(j int, _ bool) { _ = results.Send(j * j) }),
				chans.OnDone(ctx.Done(), func() { stop = true }),
			)
			for !stop {
				sel.Select()
			}
		}()
	}

	for j := 1; j <= 10; j++ {
		_ = jobs.Send(j)
	}
	sum := 0
	for range 10 {
		r, _ := results.Recv()
		sum += r
	}
	cancel()  // every worker stops,
	wg.Wait() // and returns
	fmt.Println("sum:", sum)
	// Output: sum: 385
}

// A worker loop with a quit signal and an idle timeout: it handles work as
// it comes, and stops when quit is closed, when the work channel is closed
// and drained, or when no work has come for a while. The Selector restarts
// the timeout at every call and allocates nothing per call.
func ExampleOnTimeout() {
	work := chans.New[string](8)
	quit := make(chan struct{}) // close(quit) stops the loop
	for _, w := range []string{"a", "b", "c"} {
		_ = work.Send(w)
	}

	running := true
	sel := chans.NewSelector(
		chans.OnRecv(work, func(w string, ok bool) {
			if !ok {
				running = false // work closed and drained
				return
			}
			fmt.Println("work", w)
		}),
		chans.OnDone(quit, func() { running = false }),
		chans.OnTimeout(50*time.Millisecond, func() {
			fmt.Println("idle: stopping")
			running = false
		}),
	)
	for running {
		sel.Select()
	}
	// Output:
	// work a
	// work b
	// work c
	// idle: stopping
}

// A fan-in over a list of inputs built once, where each input's case is
// disabled, from its own callback, once the input is closed and drained.
func ExampleSelector_Disable() {
	inputs := make([]*chans.Chan[int], 3)
	for i := range inputs {
		inputs[i] = chans.New[int](2)
		_ = inputs[i].Send(i + 1)
		_ = inputs[i].Send(10 * (i + 1))
		_ = inputs[i].Close()
	}

	var sel *chans.Selector
	sum, open := 0, len(inputs)
	cases := make([]chans.Case, len(inputs))
	for i, in := range inputs {
		cases[i] = chans.OnRecv(in, func(v int, ok bool) {
			if !ok {
				sel.Disable(i) // like setting a channel to nil in a select statement
				open--
				return
			}
			sum += v
		})
	}
	sel = chans.NewSelector(cases...)
	for open > 0 {
		sel.Select()
	}
	fmt.Println("sum:", sum)
	// Output: sum: 66
}

// A producer whose Selector sends a different value at each call: the
// send case reads the value from a variable when the call starts, and its
// callback moves on to the next one.
func ExampleOnSendPtr() {
	out := chans.New[int](4)
	quit := make(chan struct{})

	next, running := 1, true
	sel := chans.NewSelector(
		chans.OnSendPtr(out, &next, func(err error) {
			next *= 2
			running = err == nil && next <= 8
		}),
		chans.OnDone(quit, func() { running = false }),
	)
	for running {
		sel.Select()
	}
	_ = out.Close()
	for v := range out.All() {
		fmt.Print(v, " ")
	}
	fmt.Println()
	// Output: 1 2 4 8
}
