package chans_test

import (
	"context"
	"fmt"
	"slices"

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
