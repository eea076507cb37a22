package chans_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scalable-go/chans"
)

// The README's example: a producer sends and closes, a consumer ranges.
func Example() {
	c := chans.New[string](16) // 0: rendezvous, 16: buffered, chans.Unbounded
	go func() {
		defer c.Close()
		for _, w := range []string{"fast", "scalable", "channels"} {
			c.Send(w)
		}
	}()
	for w := range c.All() { // receives until closed and drained
		fmt.Println(w)
	}
	// Output:
	// fast
	// scalable
	// channels
}

func ExampleNew() {
	rendezvous := chans.New[int](0) // a Send waits for a receiver
	buffered := chans.New[int](8)   // up to 8 values wait in the channel
	unbounded := chans.New[int](chans.Unbounded)
	fmt.Println(rendezvous.Cap(), buffered.Cap(), unbounded.Cap() == chans.Unbounded)
	// Output: 0 8 true
}

func ExampleChan_Send() {
	c := chans.New[int](2)
	fmt.Println(c.Send(1), c.Send(2), c.Len()) // room for both: no waiting
	c.Close()
	fmt.Println(c.Send(3)) // a send after Close fails and delivers nothing
	// Output:
	// <nil> <nil> 2
	// chans: channel closed
}

func ExampleChan_Recv() {
	c := chans.New[string](0)
	go func() {
		c.Send("hello") // returns once the receiver below has the value
		c.Close()
	}()
	v, ok := c.Recv()
	fmt.Println(v, ok)
	v, ok = c.Recv() // closed and drained: the zero value and false
	fmt.Printf("%q %v\n", v, ok)
	// Output:
	// hello true
	// "" false
}

func ExampleChan_Close() {
	c := chans.New[int](4)
	c.Send(1)
	c.Send(2)
	fmt.Println(c.Close())
	fmt.Println(c.Close() == chans.ErrClosed) // only the first Close succeeds
	for v := range c.All() {                  // values sent before Close stay receivable
		fmt.Println(v)
	}
	_, err := c.TryRecv()
	fmt.Println(err)
	// Output:
	// <nil>
	// true
	// 1
	// 2
	// chans: channel closed
}

func ExampleChan_All() {
	c := chans.New[int](chans.Unbounded)
	for i := 1; i <= 5; i++ {
		c.Send(i)
	}
	for v := range c.All() {
		if v == 3 {
			break // takes nothing beyond the values yielded
		}
		fmt.Println(v)
	}
	v, _ := c.Recv()
	fmt.Println("next:", v)
	// Output:
	// 1
	// 2
	// next: 4
}

func ExampleChan_Handle() {
	jobs := chans.New[int](64)
	results := chans.New[int](chans.Unbounded)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() { // each worker goroutine takes its own Handles
			defer wg.Done()
			in, out := jobs.Handle(), results.Handle()
			for {
				j, ok := in.Recv()
				if !ok {
					return
				}
				out.Send(j * j)
			}
		}()
	}
	for j := 1; j <= 10; j++ {
		jobs.Send(j)
	}
	jobs.Close()
	wg.Wait()
	results.Close()
	sum := 0
	for r := range results.All() {
		sum += r
	}
	fmt.Println(sum)
	// Output: 385
}

func ExampleChan_TrySend() {
	c := chans.New[int](1)
	fmt.Println(c.TrySend(1))
	fmt.Println(c.TrySend(2)) // full: fails at once
	r := chans.New[int](0)
	fmt.Println(r.TrySend(3)) // rendezvous: no receiver waits
	// Output:
	// <nil>
	// chans: channel full
	// chans: channel full
}

func ExampleChan_TryRecv() {
	c := chans.New[int](1)
	_, err := c.TryRecv()
	fmt.Println(err == chans.ErrEmpty)
	c.Send(7)
	v, err := c.TryRecv()
	fmt.Println(v, err)
	// Output:
	// true
	// 7 <nil>
}

func ExampleChan_RecvContext() {
	c := chans.New[int](0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err := c.RecvContext(ctx) // nobody sends: gives up when ctx is done
	fmt.Println(err == ctx.Err(), errors.Is(err, context.DeadlineExceeded))
	// Output: true true
}

func ExampleChan_SendContext() {
	c := chans.New[int](1)
	c.Send(1) // now full
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(c.SendContext(ctx, 2)) // cannot proceed, ctx done: returns at once
	fmt.Println(c.Len())               // and delivered nothing
	// Output:
	// context canceled
	// 1
}

// AllContext stops when its context is done, and takes nothing beyond the
// values it yielded.
func ExampleChan_AllContext() {
	c := chans.New[int](chans.Unbounded)
	for i := 1; i <= 5; i++ {
		c.Send(i)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for v := range c.AllContext(ctx) {
		fmt.Println(v)
		if v == 2 {
			cancel() // the loop ends: no value is taken after this
		}
	}
	v, _ := c.Recv()
	fmt.Println("next:", v)
	// Output:
	// 1
	// 2
	// next: 3
}

// FromChan forwards a native channel, such as a time.Ticker's or one
// filled by signal.Notify, into a Chan, so that it can take part in a
// select. Its goroutine ends when the native channel is closed.
func ExampleFromChan() {
	native := make(chan string)
	go func() {
		native <- "one"
		native <- "two"
		close(native)
	}()

	in := chans.FromChan(native, 0)
	other := chans.New[string](1)
	done := false
	sel := chans.NewSelector(
		chans.OnRecv(in, func(s string, ok bool) {
			if !ok {
				done = true // native closed, and so in
				return
			}
			fmt.Println(s)
		}),
		chans.OnRecv(other, func(s string, _ bool) { fmt.Println(s) }),
	)
	for !done {
		sel.Select()
	}
	// Output:
	// one
	// two
}

// A consumer that writes values out in batches: RecvMany waits for at least
// one value and then takes every value available, up to the room in buf.
func ExampleChan_RecvMany() {
	lines := chans.New[string](1024)
	go func() {
		defer lines.Close()
		lines.SendMany([]string{"a", "b", "c", "d", "e"}) // in order, as five Sends
	}()
	buf := make([]string, 64)
	total := 0
	for {
		n, err := lines.RecvMany(buf)
		if err != nil { // closed and drained
			break
		}
		total += n // write buf[:n] out in one go
	}
	fmt.Println("lines:", total)
	// Output: lines: 5
}
