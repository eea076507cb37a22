package chans_test

// Tests of OnDone, OnTimeout, OnSendPtr and Selector.Disable/Enable. As in
// select_test.go, nothing sleeps to synchronise and nothing asserts a
// duration: a timeout test asserts only that the timeout was chosen when
// nothing else could ever be ready, and the only time bounds are bounds on
// failure (selHangBound).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

// selAsync runs f in a goroutine and returns a channel closed when it
// returns.
func selAsync(f func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	return done
}

// selWithin runs f in a goroutine and waits for it, failing the test if
// that takes more than selHangBound: f must not call t.Fatal.
func selWithin(t *testing.T, what string, f func()) {
	t.Helper()
	selWait(t, selAsync(f), what)
}

// TestOnDone checks OnDone's readiness: a closed done channel is ready in
// Select and TrySelect, an open one is not, and a nil one never is (beside a
// ready case it is never chosen, and alone it waits for the context).
// Closing done while the select is parked (most rounds) or about to park
// wakes it, and the select took nothing from the other cases.
func TestOnDone(t *testing.T) {
	checkLeaks(t)
	c := chans.New[int](1)
	var ran int
	open, shut := make(chan struct{}), make(chan struct{})
	close(shut)
	if j := chans.Select(chans.OnRecv(c, nil), chans.OnDone(shut, func() { ran++ })); j != 1 || ran != 1 {
		t.Fatalf("Select over an empty channel and a closed done: case %d, callback ran %d times", j, ran)
	}
	if j, ok := chans.TrySelect(chans.OnRecv(c, nil), chans.OnDone(open, nil)); ok {
		t.Fatalf("TrySelect with an open done channel chose case %d", j)
	}
	if j, ok := chans.TrySelect(chans.OnDone(open, nil), chans.OnDone(shut, nil)); j != 1 || !ok {
		t.Fatalf("TrySelect with a closed done channel: (%d, %v)", j, ok)
	}
	noErr(t, c.TrySend(7), "TrySend")
	nilDone := chans.OnDone(nil, func() { t.Error("the nil done case ran") })
	if j := chans.Select(nilDone, chans.OnRecv(c, nil)); j != 1 {
		t.Fatalf("Select chose case %d, the nil done case", j)
	}
	if j, ok := chans.TrySelect(nilDone); ok {
		t.Fatalf("TrySelect over a nil done chose %d", j)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if j, err := chans.SelectContext(ctx, nilDone); j != -1 || err != context.Canceled {
		t.Fatalf("SelectContext over a nil done: (%d, %v)", j, err)
	}

	for round := range 200 {
		c := chans.New[int](round % 3)
		done := make(chan struct{})
		j, ran := -1, 0
		finished := selAsync(func() {
			j = chans.Select(chans.OnRecv(c, func(int, bool) { t.Error("receive case ran") }),
				chans.OnDone(done, func() { ran++ }))
		})
		if round%2 == 0 {
			yieldALot()
		}
		close(done)
		selWait(t, finished, "Select waiting on a done channel")
		if j != 1 || ran != 1 {
			t.Fatalf("round %d: Select returned %d, done callback ran %d times", round, j, ran)
		}
		// The receive case took nothing: a value sent now is the next one.
		if c.Cap() == 0 {
			go func() { _ = c.Send(round) }()
		} else {
			noErr(t, c.TrySend(round), "TrySend")
		}
		if v, ok := c.Recv(); !ok || v != round {
			t.Fatalf("round %d: Recv after the select got (%d, %v)", round, v, ok)
		}
	}
}

// TestOnDoneMany parks selects with 1 to 9 OnDone cases, so that both the
// select's fixed slots (four) and the fallback beyond them are used, closes
// one done channel chosen at random and checks that its case, and only
// its, was chosen. The other done channels stay open.
func TestOnDoneMany(t *testing.T) {
	checkLeaks(t)
	for n := 1; n <= 9; n++ {
		for round := range 30 {
			dones := make([]chan struct{}, n)
			idle := chans.New[int](0)
			ran := -1
			cases := []chans.Case{chans.OnRecv(idle, nil)}
			for i := range dones {
				dones[i] = make(chan struct{})
				cases = append(cases, chans.OnDone(dones[i], func() { ran = i }))
			}
			sel := chans.NewSelector(cases...)
			j := -2
			finished := selAsync(func() { j = sel.Select() })
			if round%2 == 0 {
				yieldALot()
			}
			k := rand.IntN(n)
			close(dones[k])
			selWait(t, finished, fmt.Sprintf("Select over %d done channels", n))
			if j != 1+k || ran != k {
				t.Fatalf("%d done channels, closed number %d: Select returned %d, callback of %d ran", n, k, j, ran)
			}
		}
	}
}

// TestOnTimeout checks OnTimeout's readiness: with nothing else that can
// ever be ready (an idle channel, a full one, an open done channel) a
// positive timeout is chosen, in Select, SelectContext and a Selector; a
// timeout of d <= 0 is ready at once, also in TrySelect, where a positive
// one never is; of two timeouts the earlier fires; and a context that is
// done first wins over an hour-long timeout.
func TestOnTimeout(t *testing.T) {
	checkLeaks(t)
	idle, full := chans.New[int](0), chans.New[int](1)
	noErr(t, full.TrySend(1), "TrySend")
	never := make(chan struct{})
	noCase := func(name string) chans.Case {
		return chans.OnRecv(idle, func(int, bool) { t.Errorf("%s ran", name) })
	}
	ran := 0
	cases := []chans.Case{
		noCase("receive case"),
		chans.OnSend(full, 2, func(error) { t.Error("send case ran") }),
		chans.OnDone(never, func() { t.Error("done case ran") }),
		chans.OnTimeout(time.Millisecond, func() { ran++ }),
	}
	var j int
	var err error
	selWithin(t, "Select", func() { j = chans.Select(cases...) })
	if j != 3 || ran != 1 {
		t.Fatalf("Select: case %d, timeout callback ran %d times", j, ran)
	}
	selWithin(t, "SelectContext", func() { j, err = chans.SelectContext(context.Background(), cases...) })
	if j != 3 || err != nil || ran != 2 {
		t.Fatalf("SelectContext: (%d, %v), timeout callback ran %d times", j, err, ran)
	}
	sel := chans.NewSelector(cases...)
	for i := range 3 { // a reused Selector restarts the timeout on every call
		selWithin(t, "Selector.Select", func() { j = sel.Select() })
		if j != 3 || ran != 3+i {
			t.Fatalf("Selector call %d: case %d, timeout callback ran %d times", i, j, ran)
		}
	}
	if v, ok := full.Recv(); !ok || v != 1 || full.Len() != 0 {
		t.Fatalf("the full channel gave (%d, %v) and holds %d more: the send case delivered", v, ok, full.Len())
	}
	noErr(t, full.TrySend(1), "TrySend")

	for _, d := range []time.Duration{0, -time.Second} {
		if j := chans.Select(noCase("receive case"), chans.OnTimeout(d, nil)); j != 1 {
			t.Fatalf("Select with OnTimeout(%v): case %d", d, j)
		}
		if j, ok := chans.TrySelect(noCase("receive case"), chans.OnTimeout(d, nil)); j != 1 || !ok {
			t.Fatalf("TrySelect with OnTimeout(%v): (%d, %v)", d, j, ok)
		}
	}
	if j, ok := chans.TrySelect(noCase("receive case"), chans.OnTimeout(time.Nanosecond, nil)); ok {
		t.Fatalf("TrySelect with a positive timeout chose %d", j)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if j, err := chans.SelectContext(done, chans.OnTimeout(time.Nanosecond, nil)); j != -1 || err != context.Canceled {
		t.Fatalf("SelectContext with a done context and a positive timeout: (%d, %v)", j, err)
	}
	for range 20 {
		selWithin(t, "Select with two timeouts", func() {
			j = chans.Select(chans.OnTimeout(time.Hour, nil), noCase("receive case"), chans.OnTimeout(time.Millisecond, nil))
		})
		if j != 2 {
			t.Fatalf("Select with timeouts of an hour and a millisecond: case %d", j)
		}
	}
	for _, way := range cancelWays {
		ctx, wait := way.ctx()
		j, err := chans.SelectContext(ctx, noCase("receive case"), chans.OnTimeout(time.Hour, nil))
		wait()
		if j != -1 || err != ctx.Err() {
			t.Fatalf("%s: SelectContext with an hour's timeout: (%d, %v)", way.name, j, err)
		}
	}
}

// TestSelectSignalFairness checks that OnDone and OnTimeout cases ready at
// once with other cases are chosen uniformly: a closed done channel, a zero
// timeout, a buffered value and room to send; and two equal positive
// timeouts, one of which must fire (an hour-long third never does).
func TestSelectSignalFairness(t *testing.T) {
	n := selFairnessN()
	shut := make(chan struct{})
	close(shut)
	r, s := chans.New[int](1), chans.New[int](1)
	noErr(t, r.TrySend(0), "TrySend")
	sel := chans.NewSelector(chans.OnDone(shut, nil), chans.OnTimeout(0, nil), chans.OnRecv(r, nil), chans.OnSend(s, 1, nil))
	seq := make([]int, n)
	for i := range seq {
		seq[i] = sel.Select()
		switch seq[i] {
		case 2:
			noErr(t, r.TrySend(0), "restoring the value")
		case 3:
			_, err := s.TryRecv()
			noErr(t, err, "restoring the room")
		}
	}
	if msg := selUniformityFailure(seq, 4); msg != "" {
		t.Fatalf("choice among a done channel, a timeout, a value and room not uniform: %s", msg)
	}

	n = 2000 // each call waits for a timer
	if testing.Short() || raceEnabled {
		n = 400
	}
	sel = chans.NewSelector(chans.OnTimeout(time.Microsecond, nil), chans.OnTimeout(time.Hour, nil), chans.OnTimeout(time.Microsecond, nil))
	seq = seq[:n]
	var j int
	selWithin(t, "selects over two equal timeouts", func() {
		for i := range seq {
			if j = sel.Select(); j == 1 {
				return
			}
			seq[i] = j / 2
		}
	})
	if j == 1 {
		t.Fatalf("the hour-long timeout fired")
	}
	if msg := selUniformityFailure(seq, 2); msg != "" {
		t.Fatalf("choice between two equal timeouts not uniform: %s", msg)
	}
}

// raceTimeouts are the timeouts of TestSelectTimeoutRaceConservation: one
// that has fired by the time the select parks, so that it races partners
// arriving while the select registers, and two of about a partner's delay.
var raceTimeouts = []time.Duration{time.Nanosecond, 2 * time.Microsecond, 20 * time.Microsecond}

// TestSelectTimeoutRaceConservation races timeouts with values on every
// channel kind. A consumer receives through Selectors with short timeouts,
// and a producer sends through Selectors with short timeouts and OnSendPtr,
// retrying a value until its send case commits; each call picks one of
// raceTimeouts at random, so that many calls on both sides have a timer
// firing about when a partner arrives. Every value must arrive exactly
// once, in order: a timeout that also delivered would duplicate a value,
// one that also took a value would lose it.
func TestSelectTimeoutRaceConservation(t *testing.T) {
	n := 3000
	if testing.Short() || raceEnabled {
		n = 600
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		var sendTimeouts, recvTimeouts int
		produced := selAsync(func() {
			v := 0
			var sels []*chans.Selector
			for _, d := range raceTimeouts {
				sels = append(sels, chans.NewSelector(
					chans.OnSendPtr(c, &v, func(err error) {
						if err != nil {
							t.Errorf("send case: %v", err)
						}
						v++
					}),
					chans.OnTimeout(d, func() { sendTimeouts++ })))
			}
			for v < n {
				for range rand.IntN(3) {
					runtime.Gosched()
				}
				sels[rand.IntN(len(sels))].Select()
			}
		})
		want, got := 0, -1
		var sels []*chans.Selector
		for _, d := range raceTimeouts {
			sels = append(sels, chans.NewSelector(
				chans.OnRecv(c, func(x int, ok bool) { got = x }),
				chans.OnTimeout(d, func() { recvTimeouts++ })))
		}
		for want < n {
			got = -1
			if sels[rand.IntN(len(sels))].Select() == 0 {
				if got != want {
					t.Fatalf("received %d, want %d", got, want)
				}
				want++
			}
		}
		selWait(t, produced, "producer")
		if v, err := c.TryRecv(); err != chans.ErrEmpty {
			t.Fatalf("an extra value (%d, %v) after all %d", v, err, n)
		}
		t.Logf("%d values; %d send and %d receive timeouts", n, sendTimeouts, recvTimeouts)
	})
}

// signalRacer makes a case that becomes ready at a racy moment, and fires
// it: a done channel closed, or a timeout of a few microseconds.
var signalRacers = []struct {
	name string
	make func() (c chans.Case, fire func())
}{
	{"done", func() (chans.Case, func()) {
		done := make(chan struct{})
		return chans.OnDone(done, nil), func() { close(done) }
	}},
	{"timeout", func() (chans.Case, func()) {
		return chans.OnTimeout(time.Duration(rand.IntN(8))*time.Microsecond, nil), func() {}
	}},
}

// TestSelectSignalRace races a done channel's close, or a short timeout,
// with the partner that would complete a parked select's receive or send
// case, both after a random number of yields. Either the case took effect
// (the select returned it, with the value) or the signal won and the case
// had no effect (the value is still there for the next receiver, or the
// receiver got nothing from the send case); never both, never neither.
func TestSelectSignalRace(t *testing.T) {
	rounds := 1000
	if testing.Short() || raceEnabled {
		rounds = 200
	}
	for _, racer := range signalRacers {
		t.Run(racer.name, func(t *testing.T) {
			forEachSelKind(t, func(t *testing.T, capacity int) {
				var took, signalled int
				for round := range rounds {
					c, idle := chans.New[int](capacity), chans.New[int](0)
					sig, fire := racer.make()
					send := bounded(capacity) && round%2 == 1
					for i := 0; send && i < capacity; i++ {
						noErr(t, c.TrySend(-1), "TrySend filling")
					}
					j, got := -2, -1
					finished := selAsync(func() {
						if send {
							j = chans.Select(chans.OnSend(idle, 0, nil), chans.OnSend(c, round, nil), sig)
						} else {
							j = chans.Select(chans.OnRecv(idle, nil), chans.OnRecv(c, func(v int, _ bool) { got = v }), sig)
						}
					})
					partner := make(chan int, 1)
					ys, yf := rand.IntN(4), rand.IntN(4)
					partnered := selAsync(func() {
						for range ys {
							runtime.Gosched()
						}
						if send { // receive the filling, then whatever comes
							for range capacity {
								if v, ok := c.Recv(); !ok || v != -1 {
									t.Errorf("round %d: filling received as (%d, %v)", round, v, ok)
								}
							}
							v, _ := c.Recv()
							partner <- v
						} else {
							noErr(t, c.Send(round), "Send")
						}
					})
					for range yf {
						runtime.Gosched()
					}
					fire()
					selWait(t, finished, fmt.Sprintf("round %d: Select racing a %s", round, racer.name))
					switch {
					case j == 1 && (send || got == round):
						took++
					case j == 2 && got == -1:
						signalled++
						if send { // the receiver got nothing from the select: give it a value
							noErr(t, c.Send(-2), "Send")
						} else if v, ok := c.Recv(); !ok || v != round {
							t.Fatalf("round %d: after the %s won the channel gave (%d, %v), want %d", round, racer.name, v, ok, round)
						}
					default:
						t.Fatalf("round %d: Select returned %d, receive callback got %d", round, j, got)
					}
					selWait(t, partnered, "partner")
					if send {
						want := -2
						if j == 1 {
							want = round
						}
						if v := <-partner; v != want {
							t.Fatalf("round %d: Select returned %d and the receiver got %d, want %d", round, j, v, want)
						}
					}
					if v, err := c.TryRecv(); err != chans.ErrEmpty {
						t.Fatalf("round %d: extra value (%d, %v)", round, v, err)
					}
				}
				t.Logf("%d selects took effect, %d gave way to the %s", took, signalled, racer.name)
			})
		})
	}
}

// TestSelectorSignalsNoAllocs checks that a reused Selector with OnRecv,
// OnDone and OnTimeout cases allocates nothing per call once warm, whether
// a value wins (ready at once, or sent by another goroutine while the call
// is parked), the timeout wins or the done channel does; and that
// OnSendPtr, Disable and Enable allocate nothing either. The race detector
// allocates on its own, so the test skips under -race.
func TestSelectorSignalsNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const runs = 1000
	forEachSelKind(t, func(t *testing.T, capacity int) {
		c := chans.New[int](capacity)
		never, shut := make(chan struct{}), make(chan struct{})
		close(shut)
		long := chans.NewSelector(chans.OnRecv(c, nil), chans.OnDone(never, nil), chans.OnTimeout(time.Hour, nil))
		if capacity != 0 {
			if n := testing.AllocsPerRun(runs, func() {
				_ = c.TrySend(1)
				if long.Select() != 0 {
					t.Fatal("the value did not win")
				}
			}); n != 0 {
				t.Errorf("value ready: %v allocations per call", n)
			}
		}
		fed := selAsync(func() {
			for i := 0; i < runs+1; i++ {
				_ = c.Send(i)
			}
		})
		if n := testing.AllocsPerRun(runs, func() {
			if long.Select() != 0 {
				t.Fatal("the value did not win")
			}
		}); n != 0 {
			t.Errorf("value sent by another goroutine: %v allocations per call", n)
		}
		<-fed
		short := chans.NewSelector(chans.OnRecv(c, nil), chans.OnDone(never, nil), chans.OnTimeout(time.Microsecond, nil))
		if n := testing.AllocsPerRun(runs/10, func() {
			if short.Select() != 2 {
				t.Fatal("the timeout did not win")
			}
		}); n != 0 {
			t.Errorf("timeout wins: %v allocations per call", n)
		}
		closed := chans.NewSelector(chans.OnRecv(c, nil), chans.OnDone(shut, nil), chans.OnTimeout(time.Hour, nil))
		if n := testing.AllocsPerRun(runs, func() {
			if closed.Select() != 1 {
				t.Fatal("the done channel did not win")
			}
		}); n != 0 {
			t.Errorf("done channel wins: %v allocations per call", n)
		}
		if bounded(capacity) && capacity > 0 {
			v := 0
			snd := chans.NewSelector(chans.OnSendPtr(c, &v, nil), chans.OnTimeout(time.Hour, nil))
			if n := testing.AllocsPerRun(runs, func() {
				v++
				snd.Disable(1)
				snd.Enable(1)
				if snd.Select() != 0 {
					t.Fatal("the send case did not win")
				}
				if got, _ := c.TryRecv(); got != v {
					t.Fatalf("sent %d, want %d", got, v)
				}
			}); n != 0 {
				t.Errorf("OnSendPtr, Disable and Enable: %v allocations per call", n)
			}
		}
	})
}

// TestOnSendPtr checks that a Selector's OnSendPtr case sends the value *p
// holds when each call starts, including a value its own callback set in
// the call before; that a nil pointer panics and a nil channel is never
// ready.
func TestOnSendPtr(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		const n = 100
		c := chans.New[int](capacity)
		got := make(chan []int, 1)
		go func() {
			var vs []int
			for v := range c.All() {
				vs = append(vs, v)
			}
			got <- vs
		}()
		v := 0
		sel := chans.NewSelector(chans.OnSendPtr(c, &v, func(err error) {
			noErr(t, err, "send case")
			v += 2 // the next call sends this
		}))
		for i := 0; i < n; i++ {
			if i%2 == 1 {
				v-- // set between calls
			}
			sel.Select()
		}
		noErr(t, c.Close(), "Close")
		vs := <-got
		want := 0
		for i, x := range vs {
			if x != want {
				t.Fatalf("value %d sent as %d, want %d (all %v)", i, x, want, vs)
			}
			want += 2
			if i%2 == 0 {
				want--
			}
		}
		if len(vs) != n {
			t.Fatalf("%d values sent, want %d", len(vs), n)
		}
	})
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "nil pointer") {
				t.Errorf("OnSendPtr with a nil pointer: recovered %v", r)
			}
		}()
		chans.OnSendPtr(chans.New[int](1), nil, nil)
	}()
	v := 1
	if j, ok := chans.TrySelect(chans.OnSendPtr[int](nil, &v, nil)); ok {
		t.Fatalf("TrySelect over OnSendPtr on a nil channel chose %d", j)
	}
}

// TestSelectorDisable checks Disable and Enable: a disabled case is never
// chosen, ready or not, and delivers nothing; enabled again it is chosen;
// with every case disabled TrySelect finds nothing and SelectContext waits
// for its context; and a callback may disable its own case, here to drop
// each input of a fan-in once it is closed and drained.
func TestSelectorDisable(t *testing.T) {
	checkLeaks(t)
	a, b := chans.New[int](1), chans.New[int](1)
	noErr(t, a.TrySend(1), "TrySend")
	noErr(t, b.TrySend(2), "TrySend")
	sel := chans.NewSelector(chans.OnRecv(a, nil), chans.OnSend(b, 3, nil), chans.OnRecv(b, nil))
	sel.Disable(0)
	sel.Disable(0) // twice: no different
	sel.Disable(1)
	for range 20 {
		if j := sel.Select(); j != 2 {
			t.Fatalf("Select chose disabled case %d", j)
		}
		noErr(t, b.TrySend(2), "TrySend")
	}
	sel.Disable(2)
	if j, ok := sel.TrySelect(); ok {
		t.Fatalf("TrySelect with every case disabled chose %d", j)
	}
	for _, way := range cancelWays {
		ctx, wait := way.ctx()
		j, err := sel.SelectContext(ctx)
		wait()
		if j != -1 || err != ctx.Err() {
			t.Fatalf("%s: SelectContext with every case disabled: (%d, %v)", way.name, j, err)
		}
	}
	if a.Len() != 1 || b.Len() != 1 {
		t.Fatalf("disabled cases took or delivered: lengths %d and %d", a.Len(), b.Len())
	}
	sel.Enable(0)
	sel.Enable(0)
	if j := sel.Select(); j != 0 || a.Len() != 0 {
		t.Fatalf("Select after Enable(0) chose %d (a holds %d)", j, a.Len())
	}

	const inputs, each = 5, 20
	ins := make([]*chans.Chan[int], inputs)
	cases := make([]chans.Case, inputs)
	var fan *chans.Selector
	sum, open := 0, inputs
	for i := range ins {
		ins[i] = chans.New[int](i % 3)
		cases[i] = chans.OnRecv(ins[i], func(v int, ok bool) {
			if !ok {
				fan.Disable(i) // from the callback
				open--
				return
			}
			sum += v
		})
		go func() {
			for v := 1; v <= each; v++ {
				_ = ins[i].Send(v)
			}
			_ = ins[i].Close()
		}()
	}
	fan = chans.NewSelector(cases...)
	for open > 0 {
		fan.Select()
	}
	if want := inputs * each * (each + 1) / 2; sum != want {
		t.Fatalf("fan-in summed %d, want %d", sum, want)
	}
}

// TestSelectorCopiesCases checks that NewSelector keeps its own list:
// changing the caller's slice afterwards changes nothing, and Disable does
// not write into it.
func TestSelectorCopiesCases(t *testing.T) {
	a, b := chans.New[int](1), chans.New[int](1)
	noErr(t, a.TrySend(1), "TrySend")
	cases := []chans.Case{chans.OnRecv(a, nil)}
	sel := chans.NewSelector(cases...)
	cases[0] = chans.OnRecv(b, nil)
	if j, ok := sel.TrySelect(); j != 0 || !ok || a.Len() != 0 {
		t.Fatalf("TrySelect after the caller changed its slice: (%d, %v), a holds %d", j, ok, a.Len())
	}
	cases = []chans.Case{chans.OnRecv(a, nil)}
	sel = chans.NewSelector(cases...)
	sel.Disable(0)
	noErr(t, a.TrySend(1), "TrySend")
	if j, ok := chans.TrySelect(cases...); j != 0 || !ok {
		t.Fatalf("the caller's case was disabled by Selector.Disable: (%d, %v)", j, ok)
	}
}

// goroutineState returns the state of goroutine id ("select", "chan
// receive", "runnable", ...) as runtime.Stack reports it, or "" if it has
// exited.
func goroutineState(id uint64) string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	head := "goroutine " + strconv.FormatUint(id, 10) + " ["
	i := strings.Index(string(buf), head)
	if i < 0 {
		return ""
	}
	s := string(buf[i+len(head):])
	s = s[:strings.IndexByte(s, ']')]
	if k := strings.IndexByte(s, ','); k >= 0 {
		s = s[:k] // "select, 2 minutes"
	}
	return s
}

// TestSelectSignalsParkIdle checks that a select waiting on an idle
// channel, open done channels and a long timeout parks (its goroutine waits
// in the runtime's select) rather than spinning, with the done channels in
// the select's fixed slots and beyond them; and that it still wakes when a
// done channel closes.
func TestSelectSignalsParkIdle(t *testing.T) {
	checkLeaks(t)
	for _, n := range []int{1, 6} {
		idle := chans.New[int](0)
		dones := make([]chan struct{}, n)
		cases := []chans.Case{chans.OnRecv(idle, nil), chans.OnTimeout(time.Hour, nil)}
		for i := range dones {
			dones[i] = make(chan struct{})
			cases = append(cases, chans.OnDone(dones[i], nil))
		}
		var id atomic.Uint64
		j := -1
		finished := selAsync(func() {
			id.Store(goid())
			j = chans.Select(cases...)
		})
		eventually(t, "the select goroutine starts", func() bool { return id.Load() != 0 })
		deadline := time.Now().Add(selHangBound)
		for st := goroutineState(id.Load()); st != "select"; st = goroutineState(id.Load()) {
			if time.Now().After(deadline) {
				t.Fatalf("%d done channels: the select's goroutine is %q, not parked in a select, after %v", n, st, selHangBound)
			}
			runtime.Gosched()
		}
		close(dones[n-1])
		selWait(t, finished, "the parked select")
		if j != 1+n {
			t.Fatalf("%d done channels: Select returned %d, want %d", n, j, 1+n)
		}
	}
}

// TestOnDoneStressConservation runs several consumers, each selecting over
// a shared work channel and a shared quit channel (OnDone) until quit is
// closed, against producers that send until then; a producer's value sent
// is counted, and after quit every value left in the channel is drained.
// Received plus drained must equal sent, value for value.
func TestOnDoneStressConservation(t *testing.T) {
	n := 20000
	if testing.Short() || raceEnabled {
		n = 3000
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		work := chans.New[int](capacity)
		quit := make(chan struct{})
		const producers, consumers = 2, 3
		var sent, received sync.Map
		var nsent, nrecv atomic.Int64
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := p * n
				sel := chans.NewSelector(chans.OnSendPtr(work, &v, func(err error) {
					if err == nil {
						sent.Store(v, true)
						nsent.Add(1)
						v++
					}
				}), chans.OnDone(quit, nil))
				for sel.Select() == 0 && v < (p+1)*n {
				}
			}()
		}
		var cons sync.WaitGroup
		for range consumers {
			cons.Add(1)
			go func() {
				defer cons.Done()
				stop := false
				sel := chans.NewSelector(chans.OnRecv(work, func(v int, ok bool) {
					if _, dup := received.LoadOrStore(v, true); dup {
						t.Errorf("value %d received twice", v)
					}
					nrecv.Add(1)
				}), chans.OnDone(quit, func() { stop = true }))
				for !stop {
					sel.Select()
				}
			}()
		}
		eventually(t, "half the values received", func() bool { return nrecv.Load() >= int64(n) })
		close(quit)
		cons.Wait()
		wg.Wait()
		noErr(t, work.Close(), "Close")
		for v := range work.All() {
			if _, dup := received.LoadOrStore(v, true); dup {
				t.Fatalf("value %d received and still in the channel", v)
			}
			nrecv.Add(1)
		}
		if nrecv.Load() != nsent.Load() {
			t.Fatalf("sent %d values, received and drained %d", nsent.Load(), nrecv.Load())
		}
		sent.Range(func(k, _ any) bool {
			if _, ok := received.Load(k); !ok {
				t.Fatalf("value %v sent, never received", k)
			}
			return true
		})
	})
}

// TestSelectKickedAsTimeoutFires parks a select with a send and a receive
// case on one rendezvous channel, which meet each other (so the select
// parks with one case deferred, see select.go), and a short timeout, while
// one other select registers on the channel once, which kicks the parked
// select to register its deferred case again, often just as the timer
// fires. The kicked select must still commit to its timeout if nothing
// else can come: it returns however the two interleave.
func TestSelectKickedAsTimeoutFires(t *testing.T) {
	rounds := 2000
	if testing.Short() || raceEnabled {
		rounds = 300
	}
	checkLeaks(t)
	ds := []time.Duration{time.Nanosecond, time.Microsecond, 10 * time.Microsecond}
	var timeouts int
	for round := range rounds {
		c := chans.New[int](0)
		a := chans.NewSelector(chans.OnSend(c, 1, nil), chans.OnRecv(c, nil), chans.OnTimeout(ds[rand.IntN(len(ds))], nil))
		b := chans.NewSelector(chans.OnRecv(c, nil), chans.OnTimeout(ds[rand.IntN(len(ds))], nil))
		ja := -1
		finished := selAsync(func() { ja = a.Select() })
		for range rand.IntN(4) {
			runtime.Gosched()
		}
		b.Select()
		selWait(t, finished, fmt.Sprintf("round %d: a select kicked as its timeout fired", round))
		if ja == 2 {
			timeouts++
		}
	}
	t.Logf("%d of %d selects ended with their timeout", timeouts, rounds)
}
