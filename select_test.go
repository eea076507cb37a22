package chans_test

// Behaviour tests of Select, SelectContext, TrySelect and Selector, written
// fresh after the ideas of Go's runtime/chan_test.go (TestSelfSelect,
// TestSelectFairness, TestSelectDuplicateChannel, TestPseudoRandomSend) and
// test/chan/select*.go and doubleselect.go. Conservation under stress is in
// select_stress_test.go. No test sleeps to synchronise or asserts a duration;
// the only time bounds are bounds on failure (a hang becomes a failure
// instead of a test-binary timeout).

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

// selKinds is the table of channel kinds for the select tests: rendezvous,
// the smallest buffers, the block of the segment layout (64 cells) ± 1, the
// segment size (256 cells in normal builds), a large buffer, and unbounded.
var selKinds = []int{0, 1, 2, 63, 64, 65, 256, 1024, chans.Unbounded}

// forEachSelKind runs f as a subtest for each of selKinds and fails the
// subtest if it leaves goroutines behind.
func forEachSelKind(t *testing.T, f func(t *testing.T, capacity int)) {
	t.Helper()
	for _, capacity := range selKinds {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			f(t, capacity)
		})
	}
}

// selHangBound bounds how long a test waits for a goroutine that must finish
// once the test has done its part (closed a channel, cancelled a context). A
// working select needs microseconds; the bound only turns a hang into a
// readable failure with a stack dump instead of a test-binary timeout.
const selHangBound = 10 * time.Second

// selWait waits for done to be closed, or fails the test with every
// goroutine's stack after selHangBound.
func selWait(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	selWaitFor(t, done, what, selHangBound, nil)
}

// selWaitFor waits for done to be closed, or fails the test with every
// goroutine's stack after bound. On failure it then calls rescue (if not
// nil) and waits for done once more, so that goroutines stuck spinning do not
// starve the tests that run after this one.
func selWaitFor(t *testing.T, done <-chan struct{}, what string, bound time.Duration, rescue func()) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(bound):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		if rescue != nil {
			rescue()
			select {
			case <-done:
			case <-time.After(bound):
			}
		}
		t.Fatalf("%s: still running %v later\n%s", what, bound, buf)
	}
}

// goid returns the id of the calling goroutine, from the header of its stack
// trace ("goroutine 18 [running]:"). It is slow; tests call it a few times.
func goid() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		panic("goid: cannot parse " + string(buf[:]))
	}
	return id
}

// selFill makes every channel in cs ready for the test's cases: for a
// receive, one value (100+i) in c[i]; for a send, room in c[i]. On a
// buffered channel that is done directly. On a rendezvous channel a partner
// goroutine is started per channel and the test yields so that partners are
// likely parked (not needed for correctness: a select that finds no partner
// parks and is woken by the partner). The returned function waits for the
// partners; partners of losing cases must be released by the caller (close
// the channel). got[i] receives what the receive partner of c[i] got.
func selFill(t *testing.T, cs []*chans.Chan[int], recv bool) (got []chan int, wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	got = make([]chan int, len(cs))
	for i, c := range cs {
		got[i] = make(chan int, 1)
		switch {
		case c.Cap() != 0 && recv:
			noErr(t, c.TrySend(100+i), "TrySend filling")
		case c.Cap() != 0:
		case recv:
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.Send(100 + i) // ErrClosed for the partners of losing cases
			}()
		default:
			wg.Add(1)
			go func() {
				defer wg.Done()
				v, ok := c.Recv()
				if !ok {
					v = -1
				}
				got[i] <- v
			}()
		}
	}
	yieldALot()
	return got, wg.Wait
}

// TestSelectCommitsExactlyOne checks, with four cases ready at once, that
// exactly one commits: its callback, and only its, ran, in the selecting
// goroutine and before Select returned (a callback run by another goroutine
// or later would leave the plain local variables unset, or race with their
// read under -race), with the value of its channel; the losing channels
// still hold their values (receive) or got nothing (send).
func TestSelectCommitsExactlyOne(t *testing.T) {
	const rounds = 20
	forEachSelKind(t, func(t *testing.T, capacity int) {
		me := goid()
		for round := 0; round < rounds; round++ {
			// Receive cases.
			cs := []*chans.Chan[int]{chans.New[int](capacity), chans.New[int](capacity), chans.New[int](capacity), chans.New[int](capacity)}
			_, wait := selFill(t, cs, true)
			var ran []int // indices whose callback ran
			var gotV int
			var gotOK bool
			var cbG uint64
			cases := make([]chans.Case, len(cs))
			for i, c := range cs {
				cases[i] = chans.OnRecv(c, func(v int, ok bool) {
					ran = append(ran, i)
					gotV, gotOK = v, ok
					if round == 0 {
						cbG = goid()
					}
				})
			}
			j := chans.Select(cases...)
			if len(ran) != 1 || ran[0] != j {
				t.Fatalf("receive: Select returned %d, callbacks ran: %v", j, ran)
			}
			if !gotOK || gotV != 100+j {
				t.Fatalf("receive: case %d got (%d, %v), want (%d, true)", j, gotV, gotOK, 100+j)
			}
			if round == 0 && cbG != me {
				t.Fatalf("receive callback ran on goroutine %d, select on %d", cbG, me)
			}
			for i, c := range cs {
				if i == j {
					continue
				}
				v, err := c.RecvContext(context.Background()) // the losing value is still there
				if err != nil || v != 100+i {
					t.Fatalf("receive: losing case %d: channel gave (%d, %v), want %d", i, v, err, 100+i)
				}
			}
			wait()
			for i, c := range cs {
				if v, err := c.TryRecv(); err != chans.ErrEmpty {
					t.Fatalf("receive: channel %d still gives (%d, %v) after its one value", i, v, err)
				}
			}

			// Send cases.
			cs = []*chans.Chan[int]{chans.New[int](capacity), chans.New[int](capacity), chans.New[int](capacity), chans.New[int](capacity)}
			got, wait := selFill(t, cs, false)
			ran = ran[:0]
			var gotErr error = errGaveUp
			for i, c := range cs {
				cases[i] = chans.OnSend(c, 200+i, func(err error) {
					ran = append(ran, i)
					gotErr = err
					if round == 0 {
						cbG = goid()
					}
				})
			}
			j = chans.Select(cases...)
			if len(ran) != 1 || ran[0] != j || gotErr != nil {
				t.Fatalf("send: Select returned %d, callbacks ran: %v, err %v", j, ran, gotErr)
			}
			if round == 0 && cbG != me {
				t.Fatalf("send callback ran on goroutine %d, select on %d", cbG, me)
			}
			for i, c := range cs {
				noErr(t, c.Close(), "Close")
				var v int
				if capacity == 0 {
					v = <-got[i]
				} else if x, ok := c.Recv(); ok {
					v = x
				} else {
					v = -1
				}
				want := -1 // losing case: nothing delivered
				if i == j {
					want = 200 + i
				}
				if v != want {
					t.Fatalf("send: channel %d delivered %d, want %d (Select chose %d)", i, v, want, j)
				}
			}
			wait()
		}
	})
}

// TestSelectParkedCallbackInSelectingGoroutine checks that a select that had
// to park runs its winner's callback itself after it wakes, not in the
// goroutine of the partner that woke it.
func TestSelectParkedCallbackInSelectingGoroutine(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		c, idle := chans.New[int](capacity), chans.New[int](capacity)
		done := make(chan struct{})
		var selG, cbG uint64
		var got int
		var ran bool
		go func() {
			defer close(done)
			selG = goid()
			chans.Select(chans.OnRecv(idle, nil), chans.OnRecv(c, func(v int, ok bool) {
				cbG, got = goid(), v
			}))
			ran = got == 7 // read in the selecting goroutine right after Select
		}()
		yieldALot()
		noErr(t, c.Send(7), "Send")
		selWait(t, done, "Select woken by a Send")
		if !ran || cbG != selG {
			t.Fatalf("callback got %d on goroutine %d, select ran on %d", got, cbG, selG)
		}
	})
}

// TestSelectClosed checks that a case on a closed channel is ready: a
// receive gets the values buffered before Close and then ok == false, a send
// gets ErrClosed and delivers nothing; and that among cases that are not
// ready, the closed one is chosen every time.
func TestSelectClosed(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		c, idle := chans.New[int](capacity), chans.New[int](0)
		n := min(room(capacity, 3), 3)
		for i := 0; i < n; i++ {
			noErr(t, c.TrySend(i), "TrySend")
		}
		noErr(t, c.Close(), "Close")
		for i := 0; i < n+3; i++ {
			v, ok := -1, true
			j := chans.Select(chans.OnRecv(idle, nil), chans.OnRecv(c, func(x int, y bool) { v, ok = x, y }))
			want, wantOK := i, true
			if i >= n {
				want, wantOK = 0, false
			}
			if j != 1 || v != want || ok != wantOK {
				t.Fatalf("receive %d from closed: case %d got (%d, %v), want case 1 (%d, %v)", i, j, v, ok, want, wantOK)
			}
		}
		for i := 0; i < 3; i++ {
			var err error
			j := chans.Select(chans.OnRecv(idle, nil), chans.OnSend(c, 99, func(e error) { err = e }))
			if j != 1 {
				t.Fatalf("send on closed: Select chose case %d", j)
			}
			isErr(t, err, chans.ErrClosed, "OnSend on a closed channel")
			err = nil
			j, ok := chans.TrySelect(chans.OnSend(c, 99, func(e error) { err = e }), chans.OnRecv(idle, nil))
			if j != 0 || !ok {
				t.Fatalf("TrySelect send on closed: (%d, %v)", j, ok)
			}
			isErr(t, err, chans.ErrClosed, "TrySelect OnSend on a closed channel")
			j, err = chans.SelectContext(context.Background(), chans.OnRecv(idle, nil), chans.OnSend(c, 99, nil))
			if j != 1 || err != nil {
				t.Fatalf("SelectContext send on closed: (%d, %v)", j, err)
			}
		}
		if v, ok := c.Recv(); ok {
			t.Fatalf("a send on the closed channel delivered %d", v)
		}
	})
}

// TestSelectCloseWakesParked checks that Close wakes a select parked on the
// channel: a receive case with ok == false, a send case (on a full channel)
// with ErrClosed and its value never delivered.
func TestSelectCloseWakesParked(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		for _, send := range []bool{false, true} {
			if send && !bounded(capacity) {
				continue // a send on an unbounded channel never parks
			}
			c, idle := chans.New[int](capacity), chans.New[int](0)
			for i := 0; send && i < capacity; i++ {
				noErr(t, c.TrySend(i), "TrySend filling")
			}
			done := make(chan struct{})
			j, ok, err := -1, true, error(nil)
			go func() {
				defer close(done)
				if send {
					j = chans.Select(chans.OnRecv(idle, nil), chans.OnSend(c, -7, func(e error) { err = e }))
				} else {
					j = chans.Select(chans.OnRecv(idle, nil), chans.OnRecv(c, func(_ int, o bool) { ok = o }))
				}
			}()
			yieldALot()
			noErr(t, c.Close(), "Close")
			selWait(t, done, "Select parked at Close")
			if j != 1 {
				t.Fatalf("send=%v: woken Select chose case %d, want 1", send, j)
			}
			if send {
				isErr(t, err, chans.ErrClosed, "parked OnSend woken by Close")
				for i := 0; i < capacity; i++ {
					if v, ok := c.Recv(); !ok || v != i {
						t.Fatalf("drain after Close: got (%d, %v), want %d", v, ok, i)
					}
				}
				if v, ok := c.Recv(); ok {
					t.Fatalf("the failed send delivered %d", v)
				}
			} else if ok {
				t.Fatal("parked OnRecv woken by Close got ok == true")
			}
		}
	})
}

// Fairness statistics.
//
// With k cases ready at once and a uniform choice, the number of wins X of a
// case in n independent selects is Binomial(n, 1/k). Hoeffding's inequality
// bounds its tail without approximation: P(|X − n/k| ≥ t) ≤ 2·exp(−2t²/n).
// A test that checks m such counts fails a correct implementation with
// probability at most m·2·exp(−2t²/n) (union bound); setting that to
// selFalseAlarm gives t = sqrt(n·ln(2m/selFalseAlarm)/2). Selects are
// independent because each draws a fresh permutation (math/rand/v2's global
// source) and the test restores the channels to the same state after each.
//
// The test checks the k single-case counts and, over disjoint pairs of
// consecutive selects (n/2 independent pairs, each uniform over k² outcomes),
// the k² pair counts; m = k + k². For k = 4, m = 20, so t ≈ 2.99·sqrt(n) for
// singles and 2.99·sqrt(n/2) for pairs. With n = 100 000 (20 000 under -short
// or -race):
//   - a chooser that prefers one case with probability 0.3 instead of 0.25
//     is off by 0.05·n = 5 000 (1 000) against t ≈ 945 (423): caught;
//   - a chooser that always takes the first ready case in argument order,
//     or one with a broken shuffle that never keeps an element in place
//     (Sattolo's algorithm instead of Fisher-Yates), leaves a case at 0:
//     caught;
//   - a round-robin chooser has perfect single counts, but its pairs are
//     only (i, i+1 mod 4), each n/8 against the expected n/32: caught.
//
// TestSelectFairnessCheckerCatchesBias runs the same statistic on such
// sequences to show that it does fail them.
const selFalseAlarm = 1e-6

// selUniformityFailure returns a description of the first count of seq (a
// sequence of choices in [0, k)) that is farther from its expectation under
// a uniform choice than the bound above, or "" if none is.
func selUniformityFailure(seq []int, k int) string {
	n := len(seq)
	m := float64(k + k*k)
	bound := func(trials int) float64 { return math.Sqrt(float64(trials) * math.Log(2*m/selFalseAlarm) / 2) }
	single := make([]int, k)
	for _, x := range seq {
		single[x]++
	}
	for i, c := range single {
		if d := math.Abs(float64(c) - float64(n)/float64(k)); d > bound(n) {
			return fmt.Sprintf("case %d chosen %d times in %d, expected %.0f ± %.0f (all counts %v)", i, c, n, float64(n)/float64(k), bound(n), single)
		}
	}
	pairs := make([]int, k*k)
	for i := 0; i+1 < n; i += 2 {
		pairs[seq[i]*k+seq[i+1]]++
	}
	np := n / 2
	for p, c := range pairs {
		if d := math.Abs(float64(c) - float64(np)/float64(k*k)); d > bound(np) {
			return fmt.Sprintf("pair (%d,%d) chosen %d times in %d pairs, expected %.0f ± %.0f", p/k, p%k, c, np, float64(np)/float64(k*k), bound(np))
		}
	}
	return ""
}

func selFairnessN() int {
	if testing.Short() || raceEnabled {
		return 20000
	}
	return 100000
}

// TestSelectFairnessCheckerCatchesBias shows that selUniformityFailure fails
// the biased choosers described above (deterministically: their random
// sequences come from a fixed seed), and passes a fair one from the same
// source.
func TestSelectFairnessCheckerCatchesBias(t *testing.T) {
	const k = 4
	n := selFairnessN()
	r := rand.New(rand.NewPCG(1, 2))
	gen := func(choose func(i int) int) []int {
		seq := make([]int, n)
		for i := range seq {
			seq[i] = choose(i)
		}
		return seq
	}
	biased := map[string][]int{
		"prefers case 0 with p=0.3": gen(func(int) int {
			if r.Float64() < 0.3 {
				return 0
			}
			return 1 + r.IntN(3)
		}),
		"first in argument order": gen(func(int) int { return 0 }),
		"Sattolo shuffle, first of the permutation": gen(func(int) int {
			p := []int{0, 1, 2, 3}
			for i := len(p) - 1; i > 0; i-- {
				j := r.IntN(i) // Sattolo: j < i, never j == i
				p[i], p[j] = p[j], p[i]
			}
			return p[0]
		}),
		"round robin": gen(func(i int) int { return i % k }),
	}
	for name, seq := range biased {
		if msg := selUniformityFailure(seq, k); msg == "" {
			t.Errorf("%s: the fairness statistic did not catch it", name)
		} else {
			t.Logf("%s: caught: %s", name, msg)
		}
	}
	if msg := selUniformityFailure(gen(func(int) int { return r.IntN(k) }), k); msg != "" {
		t.Errorf("a fair chooser failed: %s", msg)
	}
}

// TestSelectFairness checks that among cases ready at the same time the
// choice is uniform: four cases, two receives from buffered channels that
// always hold a value and two sends to buffered channels that always have
// room (the test restores both after each select), chosen n times; see the
// fairness statistics above for the bound and what it catches.
func TestSelectFairness(t *testing.T) {
	for _, capacity := range []int{1, 32, chans.Unbounded} {
		t.Run(kindName(capacity), func(t *testing.T) {
			n := selFairnessN()
			r0, r1 := chans.New[int](capacity), chans.New[int](capacity)
			s0, s1 := chans.New[int](capacity), chans.New[int](capacity)
			noErr(t, r0.TrySend(0), "TrySend")
			noErr(t, r1.TrySend(1), "TrySend")
			sel := chans.NewSelector(
				chans.OnRecv(r0, nil), chans.OnSend(s0, 2, nil),
				chans.OnRecv(r1, nil), chans.OnSend(s1, 3, nil))
			seq := make([]int, n)
			for i := range seq {
				j := sel.Select()
				seq[i] = j
				var err error // put the channel back as it was
				switch j {
				case 0:
					err = r0.TrySend(0)
				case 2:
					err = r1.TrySend(1)
				case 1:
					_, err = s0.TryRecv()
				case 3:
					_, err = s1.TryRecv()
				}
				noErr(t, err, "restoring the channel")
			}
			if msg := selUniformityFailure(seq, 4); msg != "" {
				t.Fatalf("choice among 4 ready cases not uniform: %s", msg)
			}
		})
	}
}

// TestSelectPseudoRandomSend is Go's TestPseudoRandomSend: a select with two
// send cases on the same channel, one sending 0 and one sending 1, must send
// each about half of the time. Both cases are always ready together (or
// registered together, in a random order), so the count of zeros in n sends
// is Binomial(n, 1/2); with m = 1 Hoeffding's bound t = sqrt(n·ln(2/1e-6)/2)
// fails a correct implementation less than once in a million runs, and
// catches a select that prefers either case in 60% of the sends (an excess
// of 0.1·n against t ≈ 2.7·sqrt(n): n ≥ 730 suffices).
func TestSelectPseudoRandomSend(t *testing.T) {
	const n = 4000
	for _, capacity := range []int{0, 1, 1024, chans.Unbounded} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			c := chans.New[int](capacity)
			zeros := make(chan int, 1)
			go func() {
				z := 0
				for v := range c.All() {
					z += 1 - v
				}
				zeros <- z
			}()
			cases := []chans.Case{chans.OnSend(c, 0, nil), chans.OnSend(c, 1, nil)}
			for i := 0; i < n; i++ {
				chans.Select(cases...)
			}
			noErr(t, c.Close(), "Close")
			z := <-zeros
			bound := math.Sqrt(float64(n) * math.Log(2/selFalseAlarm) / 2)
			if math.Abs(float64(z)-float64(n)/2) > bound {
				t.Fatalf("sent 0 %d times and 1 %d times; expected %d ± %.0f each", z, n-z, n/2, bound)
			}
		})
	}
}

// TestSelectSelf is Go's TestSelfSelect: two goroutines each select over a
// send and a receive on the same channel. It must neither crash nor
// deadlock, every value sent is received exactly once, and on a rendezvous
// channel no goroutine receives its own value (a select cannot rendezvous
// with itself). Values carry their sender's id.
func TestSelectSelf(t *testing.T) {
	n := 2000
	if testing.Short() || raceEnabled {
		n = 500
	}
	for _, capacity := range []int{0, 1, 10, 32, chans.Unbounded} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			c := chans.New[int](capacity)
			var wg sync.WaitGroup
			var sent, got [2][]int
			var self [2]int
			for p := 0; p < 2; p++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < n; i++ {
						v := i<<1 | p
						snd := chans.OnSend(c, v, func(err error) {
							if err == nil {
								sent[p] = append(sent[p], v)
							}
						})
						rcv := chans.OnRecv(c, func(x int, ok bool) {
							if ok {
								got[p] = append(got[p], x)
								if x&1 == p {
									self[p]++
								}
							}
						})
						if p == 0 || i%2 == 0 {
							chans.Select(snd, rcv)
						} else {
							chans.Select(rcv, snd)
						}
					}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			selWaitFor(t, done, "self-selecting goroutines", selHangBound, func() { _ = c.Close() })
			if capacity == 0 && self[0]+self[1] > 0 {
				t.Fatalf("rendezvous: goroutines received their own values %d and %d times", self[0], self[1])
			}
			for {
				v, err := c.TryRecv()
				if err != nil {
					break
				}
				got[0] = append(got[0], v)
			}
			selCheckSame(t, append(sent[0], sent[1]...), append(got[0], got[1]...))
		})
	}
}

// selCheckSame fails the test unless got holds exactly the values of sent,
// each once (both are lists of distinct values, in any order).
func selCheckSame(t *testing.T, sent, got []int) {
	t.Helper()
	want := make(map[int]bool, len(sent))
	for _, v := range sent {
		if want[v] {
			t.Fatalf("value %d sent twice (test bug)", v)
		}
		want[v] = true
	}
	seen := make(map[int]bool, len(got))
	for _, v := range got {
		switch {
		case seen[v]:
			t.Fatalf("value %d received twice", v)
		case !want[v]:
			t.Fatalf("value %d received but never sent successfully", v)
		}
		seen[v] = true
	}
	if len(seen) != len(want) {
		for v := range want {
			if !seen[v] {
				t.Fatalf("value %d sent but never received (%d sent, %d received)", v, len(want), len(seen))
			}
		}
	}
}

// TestSelectSelfAloneCancels checks that a select that can only complete
// with itself (a send and a receive on the same rendezvous channel, no other
// goroutine) waits like any select that cannot proceed: SelectContext
// returns ctx.Err() once its context is cancelled, and nothing was sent.
// Native select parks in this situation; a select that keeps re-registering
// its two cases, each killing the other's registration, never looks at its
// context and spins forever.
func TestSelectSelfAloneCancels(t *testing.T) {
	for _, capacity := range []int{0} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			c := chans.New[int](capacity)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			j, err := 0, error(nil)
			go func() {
				defer close(done)
				j, err = chans.SelectContext(ctx, chans.OnSend(c, 1, nil), chans.OnRecv(c, nil))
			}()
			yieldALot()
			cancel()
			selWaitFor(t, done, "SelectContext on a self-select after cancel", selHangBound, func() { _ = c.Close() })
			if j != -1 {
				t.Fatalf("SelectContext chose case %d with no partner", j)
			}
			isErr(t, err, context.Canceled, "SelectContext")
		})
	}
}

// TestSelectOppositeOrder is the idea of Go's doubleselect.go: two
// goroutines select over the same two channels in opposite roles and
// orders (one sends on x and receives from y, the other sends on y and
// receives from x), round after round. They must never deadlock or
// livelock; the test's only failure signal for that is selWait's bound. Each
// select also has a stop case; the second goroutine to finish its rounds
// closes stop, so that neither waits forever for a partner that has left.
// Every value sent is received exactly once.
func TestSelectOppositeOrder(t *testing.T) {
	n := 5000
	if testing.Short() || raceEnabled {
		n = 1000
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		x, y := chans.New[int](capacity), chans.New[int](capacity)
		stop := chans.New[struct{}](0)
		var finished atomic.Int32
		var wg sync.WaitGroup
		var sent, got [2][]int
		for p := 0; p < 2; p++ {
			out, in := x, y
			if p == 1 {
				out, in = y, x
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				stopped, rounds, next := false, 0, p
				snd := func(err error) {
					if err == nil {
						sent[p] = append(sent[p], next)
						next += 2
					}
					rounds++
				}
				rcv := func(v int, ok bool) {
					if ok {
						got[p] = append(got[p], v)
					}
					rounds++
				}
				for !stopped {
					// Cases are rebuilt each round: the send case carries the next value.
					cases := []chans.Case{
						chans.OnSend(out, next, snd),
						chans.OnRecv(in, rcv),
						chans.OnRecv(stop, func(struct{}, bool) { stopped = true }),
					}
					if p == 1 {
						cases[0], cases[1] = cases[1], cases[0]
					}
					before := rounds
					chans.Select(cases...)
					if before < n && rounds == n && finished.Add(1) == 2 {
						noErr(t, stop.Close(), "Close stop")
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		selWait(t, done, "opposite-order selects")
		for _, c := range []*chans.Chan[int]{x, y} {
			for {
				v, err := c.TryRecv()
				if err != nil {
					break
				}
				got[0] = append(got[0], v)
			}
		}
		selCheckSame(t, append(sent[0], sent[1]...), append(got[0], got[1]...))
	})
}

// TestSelectDuplicateChannel is Go's TestSelectDuplicateChannel: a select
// with two receive cases on the same rendezvous channel c (and one on d)
// parks, a plain receiver parks on c after it, the select is woken through
// d. Then a send on c must reach the plain receiver: a registration of the
// select left behind on c would swallow it. Then, for every kind, selects
// whose every case is the same channel receive its values in FIFO order,
// one per select.
func TestSelectDuplicateChannel(t *testing.T) {
	t.Run("wake-through-other", func(t *testing.T) {
		checkLeaks(t)
		c, d := chans.New[int](0), chans.New[int](0)
		selDone, recvDone := make(chan struct{}), make(chan struct{})
		j, plain := -1, -1
		go func() {
			defer close(selDone)
			j = chans.Select(chans.OnRecv(c, nil), chans.OnRecv(c, nil), chans.OnRecv(d, nil))
		}()
		yieldALot() // make it likely that the select is parked on c before the receiver
		go func() {
			defer close(recvDone)
			plain, _ = c.Recv()
		}()
		yieldALot()
		noErr(t, d.Send(7), "Send on d")
		selWait(t, selDone, "select woken through d")
		if j != 2 {
			t.Fatalf("select woken by a send on d chose case %d", j)
		}
		noErr(t, c.Send(8), "Send on c")
		selWait(t, recvDone, "plain receiver after the select left c")
		if plain != 8 {
			t.Fatalf("plain receiver got %d, want 8", plain)
		}
	})
	forEachSelKind(t, func(t *testing.T, capacity int) {
		const n = 100
		c := chans.New[int](capacity)
		go func() {
			for i := 0; i < n; i++ {
				_ = c.Send(i)
			}
		}()
		var got []int
		rcv := chans.OnRecv(c, func(v int, ok bool) { got = append(got, v) })
		rcv2 := chans.OnRecv(c, func(v int, ok bool) { got = append(got, v) })
		for i := 0; i < n; i++ {
			before := len(got)
			chans.Select(rcv, rcv2, rcv2)
			if len(got) != before+1 || got[before] != i {
				t.Fatalf("select %d over one channel got %v, want one more value %d", i, got[before:], i)
			}
		}
		if v, err := c.TryRecv(); err != chans.ErrEmpty {
			t.Fatalf("extra value (%d, %v) after %d receives", v, err, n)
		}
	})
}

// TestTrySelectIdle checks that TrySelect returns (-1, false), runs no
// callback and changes nothing when no case is ready: receives on empty
// channels, sends on full ones (rendezvous: no receiver), nil channels, no
// cases at all. It runs in the test goroutine, so a TrySelect that blocks
// fails by the test timeout.
func TestTrySelectIdle(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		empty, full := chans.New[int](capacity), chans.New[int](capacity)
		if bounded(capacity) {
			for i := 0; i < capacity; i++ {
				noErr(t, full.TrySend(i), "TrySend filling")
			}
		}
		ran := false
		cases := []chans.Case{
			chans.OnRecv(empty, func(int, bool) { ran = true }),
			chans.OnRecv[int](nil, func(int, bool) { ran = true }),
			chans.OnSend[int](nil, 1, func(error) { ran = true }),
		}
		if bounded(capacity) {
			cases = append(cases, chans.OnSend(full, -1, func(error) { ran = true }))
		}
		sel := chans.NewSelector(cases...)
		for i := 0; i < 100; i++ {
			if j, ok := chans.TrySelect(cases...); j != -1 || ok || ran {
				t.Fatalf("TrySelect on idle cases: (%d, %v), callback ran: %v", j, ok, ran)
			}
			if j, ok := sel.TrySelect(); j != -1 || ok || ran {
				t.Fatalf("Selector.TrySelect on idle cases: (%d, %v), callback ran: %v", j, ok, ran)
			}
		}
		if j, ok := chans.TrySelect(); j != -1 || ok {
			t.Fatalf("TrySelect with no cases: (%d, %v)", j, ok)
		}
		// Nothing changed: the full channel holds exactly its values, the empty one none.
		for i := 0; bounded(capacity) && i < capacity; i++ {
			if v, err := full.TryRecv(); err != nil || v != i {
				t.Fatalf("full channel after TrySelects: (%d, %v), want %d", v, err, i)
			}
		}
		for _, c := range []*chans.Chan[int]{empty, full} {
			if v, err := c.TryRecv(); err != chans.ErrEmpty {
				t.Fatalf("channel after TrySelects gives (%d, %v), want ErrEmpty", v, err)
			}
		}
		// And a ready case is taken: a buffered value, or a parked sender
		// (rendezvous: polled, as nothing tells when the sender has parked;
		// a TrySelect that ignored parked senders would poll in vain).
		if capacity != 0 {
			noErr(t, empty.TrySend(5), "TrySend")
			got := 0
			j, ok := chans.TrySelect(chans.OnRecv[int](nil, nil), chans.OnRecv(empty, func(v int, _ bool) { got = v }))
			if j != 1 || !ok || got != 5 {
				t.Fatalf("TrySelect with a value buffered: (%d, %v) got %d", j, ok, got)
			}
		} else {
			sent := make(chan error, 1)
			go func() { sent <- empty.Send(5) }()
			got := 0
			eventually(t, "TrySelect from a parked sender", func() bool {
				j, ok := chans.TrySelect(chans.OnRecv(empty, func(v int, _ bool) { got = v }))
				return ok && j == 0
			})
			noErr(t, <-sent, "Send")
			if got != 5 {
				t.Fatalf("TrySelect from a parked sender got %d", got)
			}
		}
	})
}

// TestSelectContextAlreadyDone checks that SelectContext with a context that
// is already done never blocks: with no case ready it returns (-1, ctx.Err())
// unwrapped and runs no callback; with a case ready it may commit it (as
// documented), and then returns its index and nil. It runs in the test
// goroutine: a SelectContext that blocks fails by the test timeout.
func TestSelectContextAlreadyDone(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		for _, dc := range doneContexts() {
			c, idle := chans.New[int](capacity), chans.New[int](0)
			ran := false
			cases := []chans.Case{
				chans.OnRecv(c, func(int, bool) { ran = true }),
				chans.OnRecv(idle, func(int, bool) { ran = true }),
				chans.OnSend(idle, 1, func(error) { ran = true }),
				chans.OnRecv[int](nil, func(int, bool) { ran = true }),
			}
			for i := 0; i < 50; i++ {
				j, err := chans.SelectContext(dc.ctx, cases...)
				if j != -1 || ran {
					t.Fatalf("%s: SelectContext on idle cases chose %d, callback ran: %v", dc.name, j, ran)
				}
				isErr(t, err, dc.ctx.Err(), dc.name+": SelectContext")
				j, err = chans.NewSelector(cases...).SelectContext(dc.ctx)
				if j != -1 || ran {
					t.Fatalf("%s: Selector.SelectContext on idle cases chose %d", dc.name, j)
				}
				isErr(t, err, dc.ctx.Err(), dc.name+": Selector.SelectContext")
			}
			j, err := chans.SelectContext(dc.ctx) // no cases at all
			if j != -1 {
				t.Fatalf("%s: SelectContext with no cases: %d", dc.name, j)
			}
			isErr(t, err, dc.ctx.Err(), dc.name+": SelectContext with no cases")
			if capacity != 0 {
				noErr(t, c.TrySend(3), "TrySend")
				j, err := chans.SelectContext(dc.ctx, cases...)
				if j != 0 || err != nil || !ran {
					t.Fatalf("%s: SelectContext with a value ready: (%d, %v), callback ran %v", dc.name, j, err, ran)
				}
			} else { // a parked sender is a ready case
				sent := make(chan error, 1)
				go func() { sent <- c.Send(3) }()
				eventually(t, dc.name+": SelectContext from a parked sender", func() bool {
					j, err := chans.SelectContext(dc.ctx, cases...)
					return j == 0 && err == nil
				})
				noErr(t, <-sent, "Send")
				if !ran {
					t.Fatalf("%s: callback did not run", dc.name)
				}
			}
			if v, err := idle.TryRecv(); err != chans.ErrEmpty {
				t.Fatalf("%s: idle channel gives (%d, %v)", dc.name, v, err)
			}
		}
	})
}

// TestTrySelectNeverFalselyEmpty checks that TrySelect does not report
// "nothing ready" while, at every instant of its call, some case was ready.
//
// Setup: two channels a and b and two tokens. A mover goroutine loops: take
// a token from one channel (TryRecv), put it in the other (TrySend). The
// test goroutine loops: TrySelect a receive from a or b, then put the token
// back (a select over sends). The mover holds at most one token at a time
// (its receive completes before its send starts), and the test goroutine
// holds none while its TrySelect runs (its previous send has returned); so
// during every TrySelect call at least one token is buffered in a or b: at
// every instant one of the two receive cases is ready, and TrySelect must
// succeed every time. (One token would not do: while the mover holds it,
// both channels really are empty.) Capacities are at least 2, so a send
// always finds room (two tokens fit in either channel).
//
// A TrySelect that polls the channels one after another fails this. Say a is
// empty, b holds token 2 and the mover holds token 1. The poll finds a
// empty; the mover puts 1 into a and takes 2 out of b; the poll finds b
// empty. At no instant were both channels empty (b held 2 until a held 1),
// yet the poll reports nothing ready. The window is the mover's two
// operations, a few hundred nanoseconds, so the miss is rare;
// TestTrySelectNeverFalselyEmptyCheckerSeesNaive
// counts such misses of a naive poll in the same setup (a few to a few tens
// per 100 000 on two cores, more if the poll is descheduled between its
// reads). The test is therefore a probabilistic check: with n = 200 000 a
// naive TrySelect is likely, not certain, to fail it; a correct one never
// does.
func TestTrySelectNeverFalselyEmpty(t *testing.T) {
	n := 200000
	if testing.Short() || raceEnabled {
		n = 20000
	}
	for _, capacity := range []int{2, 32, chans.Unbounded} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			misses := selShuttle(t, capacity, selShuttleK, n, func(cs []*chans.Chan[int]) (int, bool) {
				var v int
				cases := make([]chans.Case, len(cs))
				for i, c := range cs {
					cases[i] = chans.OnRecv(c, func(x int, _ bool) { v = x })
				}
				_, ok := chans.TrySelect(cases...)
				return v, ok
			})
			if misses > 0 {
				t.Fatalf("TrySelect reported no case ready %d times in %d while a token was always buffered", misses, n)
			}
		})
	}
}

// TestTrySelectNeverFalselyEmptyCheckerSeesNaive runs the setup of
// TestTrySelectNeverFalselyEmpty with a naive TrySelect that polls the
// channels one after another with TryRecv, to show that the setup can catch
// a falsely empty answer. Whether a miss happens depends on scheduling, so
// it only logs the count.
func TestTrySelectNeverFalselyEmptyCheckerSeesNaive(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("demonstration only")
	}
	checkLeaks(t)
	n := 100000
	misses := selShuttle(t, 2, selShuttleK, n, func(cs []*chans.Chan[int]) (int, bool) {
		for _, c := range cs {
			if v, err := c.TryRecv(); err == nil {
				return v, true
			}
		}
		return 0, false
	})
	t.Logf("naive poll reported both channels empty %d times in %d", misses, n)
}

// selShuttleK is the number of channels of the shuttle. More channels do
// not make misses of a naive poll more frequent (measured with 2 to 16).
const selShuttleK = 2

// selShuttle runs the two-token setup of TestTrySelectNeverFalselyEmpty over
// k channels for n takes and returns how many of them reported no token.
func selShuttle(t *testing.T, capacity, k, n int, take func(cs []*chans.Chan[int]) (int, bool)) (misses int) {
	t.Helper()
	cs := make([]*chans.Chan[int], k)
	for i := range cs {
		cs[i] = chans.New[int](capacity)
	}
	noErr(t, cs[0].TrySend(1), "TrySend")
	noErr(t, cs[k-1].TrySend(2), "TrySend")
	sendTo := func(v int) { // never blocks for long: 2 tokens, capacity ≥ 2
		cases := make([]chans.Case, k)
		for i, c := range cs {
			cases[i] = chans.OnSend(c, v, nil)
		}
		chans.Select(cases...)
	}
	quit := chans.New[struct{}](0)
	moverDone := make(chan struct{})
	spurious := 0
	go func() {
		defer close(moverDone)
		r := rand.New(rand.NewPCG(uint64(k), uint64(n)))
		for i := 0; ; i++ {
			if i%64 == 0 {
				if _, err := quit.TryRecv(); err == chans.ErrClosed {
					return
				}
			}
			// Move a token from one channel to another, with plain
			// operations: they are faster than selects, and a quick mover
			// makes a poll that looks at one channel after another miss
			// more often.
			from := r.IntN(k)
			tok, err := cs[from].TryRecv()
			if err != nil {
				continue
			}
			to := cs[(from+1+r.IntN(k-1))%k]
			if err := to.TrySend(tok); err != nil {
				spurious++ // there is room: a channel bug, reported below
				_ = to.Send(tok)
			}
		}
	}()
	for i := 0; i < n; i++ {
		v, ok := take(cs)
		if !ok {
			misses++
			continue
		}
		sendTo(v)
	}
	noErr(t, quit.Close(), "Close quit")
	selWait(t, moverDone, "mover")
	if spurious > 0 {
		t.Errorf("the mover's TrySend reported no room %d times while the channel had room", spurious)
	}
	// Both tokens are still there, once each.
	var toks []int
	for _, c := range cs {
		for {
			v, err := c.TryRecv()
			if err != nil {
				break
			}
			toks = append(toks, v)
		}
	}
	if len(toks) != 2 || toks[0]+toks[1] != 3 {
		t.Fatalf("tokens after the shuttle: %v, want 1 and 2", toks)
	}
	return misses
}

// TestSelectorReuse checks that Cases and a Selector can be used for many
// selects in a row, by plain Select and by the Selector's three methods, and
// that each call commits one case with the current values.
func TestSelectorReuse(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		const n = 300
		c := chans.New[int](capacity)
		out := chans.New[int](capacity)
		go func() {
			for i := 0; i < n; i++ {
				_ = c.Send(i)
			}
		}()
		echoDone := make(chan []int, 1)
		go func() {
			var got []int
			for v := range out.All() {
				got = append(got, v)
			}
			echoDone <- got
		}()
		var last int
		var sends int
		rcv := chans.OnRecv(c, func(v int, ok bool) { last = v })
		snd := chans.OnSend(out, 7, func(err error) {
			if err == nil {
				sends++
			}
		})
		sel := chans.NewSelector(rcv)
		cases := []chans.Case{rcv}
		for i := 0; i < n; i++ {
			last = -1
			var j int
			switch i % 4 {
			case 0:
				j = chans.Select(cases...)
			case 1:
				j = sel.Select()
			case 2:
				var err error
				j, err = sel.SelectContext(context.Background())
				noErr(t, err, "Selector.SelectContext")
			case 3:
				var ok bool
				for j, ok = sel.TrySelect(); !ok; j, ok = sel.TrySelect() {
					runtime.Gosched()
				}
			}
			if j != 0 || last != i {
				t.Fatalf("select %d: case %d got %d, want case 0 value %d", i, j, last, i)
			}
			if i%50 == 0 {
				chans.Select(snd) // a send case built once, used again and again
			}
		}
		noErr(t, out.Close(), "Close")
		got := <-echoDone
		for _, v := range got {
			if v != 7 {
				t.Fatalf("echo got %v", got)
			}
		}
		if len(got) != sends || sends != n/50 {
			t.Fatalf("echo got %v after %d sends", got, sends)
		}
	})
}

// TestSelectQuitLoopBounded is the service pattern: a loop of selects over a
// busy work channel and an idle quit channel. Most selects register on quit
// and lose there. The loop must not grow the heap, and quit must still work
// afterwards: the next Select sees its Close.
//
// Each lost registration is a cancelled cell on quit, which must be freed
// with its segment. The worker acks each item (over a rendezvous channel),
// so that the producer's next send usually comes after the select has
// registered: with two cores 40-55% of the selects register on quit
// (measured through the package's counters). quit's element is 1 KiB, so a
// leak of the cells of even a fifth of the selects, 20 MB per 100 000,
// clearly exceeds the 8 MiB allowance. (A buffered ack channel would make
// the test fail on a leak that has nothing to do with select: a buffered
// channel whose receivers keep up never moves its buffer root, see
// TestReviewBufSegRetention.)
func TestSelectQuitLoopBounded(t *testing.T) {
	n := 1000000
	if testing.Short() || raceEnabled {
		n = 100000
	}
	checkLeaks(t)
	type quitMsg [1024]byte
	work, ack := chans.New[int](0), chans.New[struct{}](0)
	quit := chans.New[quitMsg](0)
	go func() {
		for i := 0; i < n; i++ {
			_ = work.Send(i)
			ack.Recv()
		}
	}()
	var sum, wins int
	var quitOK = true
	sel := chans.NewSelector(
		chans.OnRecv(work, func(v int, _ bool) { sum += v }),
		chans.OnRecv(quit, func(_ quitMsg, ok bool) { quitOK = ok }))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < n; i++ {
		if sel.Select() == 0 {
			wins++
		}
		_ = ack.Send(struct{}{})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if wins != n || sum != n*(n-1)/2 {
		t.Fatalf("work case won %d of %d selects, sum %d", wins, n, sum)
	}
	if growth := int64(after.HeapAlloc) - int64(before.HeapAlloc); growth > 8<<20 {
		t.Fatalf("heap grew by %d bytes over %d selects (from %d to %d)", growth, n, before.HeapAlloc, after.HeapAlloc)
	}
	noErr(t, quit.Close(), "Close quit")
	if j := sel.Select(); j != 1 || quitOK {
		t.Fatalf("after Close(quit): Select chose %d, ok %v", j, quitOK)
	}
	// Quit still works for plain operations: a rendezvous across it.
	q2done := make(chan struct{})
	go func() { defer close(q2done); _, _ = quit.Recv() }()
	selWait(t, q2done, "Recv on the closed quit channel")
}

// TestSelectContextCancelled checks that a select parked with a context that
// becomes done returns (-1, ctx.Err()) and that no case took effect: a
// receive case took no value (the value sent afterwards goes to the next
// receiver) and a send case delivered nothing (the channel holds exactly its
// earlier values).
func TestSelectContextCancelled(t *testing.T) {
	forEachSelKind(t, func(t *testing.T, capacity int) {
		for _, way := range cancelWays {
			if way.name == "already-done" {
				continue // TestSelectContextAlreadyDone
			}
			rc, sc := chans.New[int](capacity), chans.New[int](capacity)
			for i := 0; bounded(capacity) && i < capacity; i++ {
				noErr(t, sc.TrySend(i), "TrySend filling")
			}
			cases := []chans.Case{chans.OnRecv(rc, func(int, bool) { t.Error("receive case ran") })}
			if bounded(capacity) {
				cases = append(cases, chans.OnSend(sc, -1, func(error) { t.Error("send case ran") }))
			}
			ctx, wait := way.ctx()
			j, err := chans.SelectContext(ctx, cases...)
			wait()
			if j != -1 {
				t.Fatalf("%s: SelectContext chose %d with nothing ready", way.name, j)
			}
			isErr(t, err, ctx.Err(), way.name+": SelectContext")
			// No value taken from rc: a value sent now is the next one received.
			sent := make(chan error, 1)
			go func() { sent <- rc.Send(42) }()
			if v, ok := rc.Recv(); !ok || v != 42 {
				t.Fatalf("%s: Recv after a cancelled select got (%d, %v)", way.name, v, ok)
			}
			noErr(t, <-sent, "Send")
			// Nothing delivered to sc.
			noErr(t, sc.Close(), "Close")
			for i := 0; bounded(capacity) && i < capacity; i++ {
				if v, ok := sc.Recv(); !ok || v != i {
					t.Fatalf("%s: drain got (%d, %v), want %d", way.name, v, ok, i)
				}
			}
			if v, ok := sc.Recv(); ok {
				t.Fatalf("%s: the cancelled send case delivered %d", way.name, v)
			}
		}
	})
}

// TestSelectNilChannel checks that a case on a nil channel is never ready:
// beside a ready case it is never chosen, TrySelect over nil cases reports
// nothing ready, and a SelectContext (or Selector.SelectContext) with only
// nil cases, or none, waits until its context is cancelled and returns
// ctx.Err().
func TestSelectNilChannel(t *testing.T) {
	checkLeaks(t)
	c := chans.New[int](1)
	nilRecv := chans.OnRecv[int](nil, func(int, bool) { t.Error("nil receive case ran") })
	nilSend := chans.OnSend[int](nil, 1, func(error) { t.Error("nil send case ran") })
	for i := 0; i < 100; i++ {
		noErr(t, c.TrySend(i), "TrySend")
		if j := chans.Select(nilRecv, nilSend, chans.OnRecv(c, nil), nilRecv); j != 2 {
			t.Fatalf("Select chose case %d, a nil case", j)
		}
	}
	if j, ok := chans.TrySelect(nilRecv, nilSend); j != -1 || ok {
		t.Fatalf("TrySelect over nil cases: (%d, %v)", j, ok)
	}
	for _, way := range cancelWays {
		for _, cases := range [][]chans.Case{{nilRecv, nilSend}, nil} {
			ctx, wait := way.ctx()
			j, err := chans.SelectContext(ctx, cases...)
			wait()
			if j != -1 {
				t.Fatalf("%s: SelectContext over nil cases chose %d", way.name, j)
			}
			isErr(t, err, ctx.Err(), way.name+": SelectContext over nil cases")
			ctx, wait = way.ctx()
			j, err = chans.NewSelector(cases...).SelectContext(ctx)
			wait()
			if j != -1 {
				t.Fatalf("%s: Selector.SelectContext over nil cases chose %d", way.name, j)
			}
			isErr(t, err, ctx.Err(), way.name+": Selector.SelectContext over nil cases")
		}
	}
}

// TestSelectCloseRace races Close with a select that is just starting, so
// that Close often lands while the select polls or registers rather than
// after it has parked: the select must still return, with ok == false for a
// receive case and ErrClosed for a send case on a full channel, and the send
// must deliver nothing.
func TestSelectCloseRace(t *testing.T) {
	rounds := 500
	if testing.Short() || raceEnabled {
		rounds = 100
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		for round := 0; round < rounds; round++ {
			send := bounded(capacity) && round%2 == 1
			c, idle := chans.New[int](capacity), chans.New[int](0)
			for i := 0; send && i < capacity; i++ {
				noErr(t, c.TrySend(i), "TrySend filling")
			}
			done := make(chan struct{})
			j, ok, err := -1, true, error(nil)
			go func() {
				defer close(done)
				if send {
					j = chans.Select(chans.OnSend(idle, 1, nil), chans.OnSend(c, -7, func(e error) { err = e }))
				} else {
					j = chans.Select(chans.OnRecv(idle, nil), chans.OnRecv(c, func(_ int, o bool) { ok = o }))
				}
			}()
			if round%3 == 0 {
				runtime.Gosched()
			}
			noErr(t, c.Close(), "Close")
			selWait(t, done, fmt.Sprintf("round %d: Select racing Close", round))
			switch {
			case j != 1:
				t.Fatalf("round %d: Select chose case %d, want 1", round, j)
			case send && err != chans.ErrClosed:
				t.Fatalf("round %d: send case got %v, want ErrClosed", round, err)
			case !send && ok:
				t.Fatalf("round %d: receive case got ok == true from an empty closed channel", round)
			}
			for i := 0; send && i < capacity; i++ {
				if v, ok := c.Recv(); !ok || v != i {
					t.Fatalf("round %d: drain got (%d, %v), want %d", round, v, ok, i)
				}
			}
			if v, ok := c.Recv(); ok {
				t.Fatalf("round %d: the failed send delivered %d", round, v)
			}
		}
	})
}

// TestSelectContextCancelRace races a context's cancellation with the send
// that would complete a parked SelectContext. Either the select took the
// value (it returns 0 and nil and its callback saw the value) or it returns
// (-1, ctx.Err()) and took nothing (the value is then still there for the
// next receiver); never both, never neither.
func TestSelectContextCancelRace(t *testing.T) {
	rounds := 2000
	if testing.Short() || raceEnabled {
		rounds = 300
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		var took, gaveUp int
		for round := 0; round < rounds; round++ {
			c, idle := chans.New[int](capacity), chans.New[int](0)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			j, err, got := -2, error(nil), -1
			go func() {
				defer close(done)
				j, err = chans.SelectContext(ctx, chans.OnRecv(idle, nil), chans.OnRecv(c, func(v int, _ bool) { got = v }))
			}()
			// The send and the cancellation come from two goroutines, each
			// after a random number of yields, so that either may be first.
			sent := make(chan error, 1)
			ys, yc := rand.IntN(4), rand.IntN(4)
			go func() {
				for range ys {
					runtime.Gosched()
				}
				sent <- c.Send(round)
			}()
			go func() {
				for range yc {
					runtime.Gosched()
				}
				cancel()
			}()
			selWait(t, done, fmt.Sprintf("round %d: SelectContext racing cancel", round))
			switch {
			case j == 1 && err == nil && got == round:
				took++
				noErr(t, <-sent, "Send")
			case j == -1 && err == context.Canceled && got == -1:
				gaveUp++
				if v, ok := c.Recv(); !ok || v != round {
					t.Fatalf("round %d: after a cancelled select the channel gave (%d, %v), want %d", round, v, ok, round)
				}
				noErr(t, <-sent, "Send")
			default:
				t.Fatalf("round %d: SelectContext returned (%d, %v), callback got %d", round, j, err, got)
			}
			if v, err := c.TryRecv(); err != chans.ErrEmpty {
				t.Fatalf("round %d: extra value (%d, %v)", round, v, err)
			}
		}
		t.Logf("%d selects took the value, %d gave up", took, gaveUp)
	})
}

// TestSelectorNoAllocs checks that a Selector's Select, parked or not, and
// an idle TrySelect allocate nothing per call once warm (segments of the
// channels, one per 256 cells, round away in AllocsPerRun's average). The
// race detector allocates on its own, so the test skips under -race.
func TestSelectorNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const runs = 1000
	forEachSelKind(t, func(t *testing.T, capacity int) {
		c, quit := chans.New[int](capacity), chans.New[int](0)
		sel := chans.NewSelector(chans.OnRecv(c, nil), chans.OnRecv(quit, nil))
		idle := chans.NewSelector(chans.OnRecv(quit, nil), chans.OnSend(quit, 0, nil))
		if n := testing.AllocsPerRun(runs, func() { idle.TrySelect() }); n != 0 {
			t.Errorf("idle TrySelect: %v allocations per call", n)
		}
		if capacity != 0 {
			if n := testing.AllocsPerRun(runs, func() { _ = c.TrySend(1); sel.Select() }); n != 0 {
				t.Errorf("Select with a value ready: %v allocations per call", n)
			}
		}
		done := make(chan struct{})
		go func() { // feeds the selects below, which mostly find nothing ready and park
			defer close(done)
			for i := 0; i < runs+1; i++ {
				_ = c.Send(i)
			}
		}()
		if n := testing.AllocsPerRun(runs, func() { sel.Select() }); n != 0 {
			t.Errorf("Select fed by another goroutine: %v allocations per call", n)
		}
		<-done
	})
}

// TestTrySelectNeverFalselyFullOrEmpty pits a producer that spins on
// TrySelect(OnSend) against a consumer that spins on TrySelect(OnRecv), on
// one buffered channel. Each publishes how many values it has moved (an
// atomic counter, raised after its TrySelect returns, so it never runs ahead
// of the truth). Before each attempt the producer reads the consumer's count
// R; the buffer then holds at most S − R values (S: the producer's own
// successes) at every instant of the attempt, since receives only add to R.
// So if S − R < capacity the buffer has room throughout, and a failed send
// is a false "full". Likewise the consumer reads the producer's count S
// before each attempt: the buffer then holds at least S − R values (R: the
// consumer's own successes) throughout, and if that is positive a failed
// receive is a false "empty". Neither needs any timing: the test fails only
// on an answer that no instant of the call could justify.
func TestTrySelectNeverFalselyFullOrEmpty(t *testing.T) {
	n := 100000
	if testing.Short() || raceEnabled {
		n = 5000
	}
	for _, capacity := range []int{1, 2, 32, 1024} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			c := chans.New[int](capacity)
			var sent, recvd atomic.Int64
			var falseEmpty, falseFull int
			done := make(chan struct{})
			go func() { // consumer
				defer close(done)
				r := int64(0)
				rcv := chans.NewSelector(chans.OnRecv(c, nil))
				for r < int64(n) {
					s := sent.Load()
					if _, ok := rcv.TrySelect(); ok {
						r++
						recvd.Store(r)
					} else {
						if s > r {
							falseEmpty++
						}
						runtime.Gosched() // let the producer run if it shares this P
					}
				}
			}()
			snd := chans.NewSelector(chans.OnSend(c, 1, nil))
			for s := int64(0); s < int64(n); {
				r := recvd.Load()
				if _, ok := snd.TrySelect(); ok {
					s++
					sent.Store(s)
				} else {
					if s-r < int64(capacity) {
						falseFull++
					}
					runtime.Gosched()
				}
			}
			selWait(t, done, "consumer")
			if falseFull > 0 || falseEmpty > 0 {
				t.Fatalf("%d values: TrySelect reported a send case not ready %d times while the buffer had room, a receive case not ready %d times while it held a value", n, falseFull, falseEmpty)
			}
		})
	}
}

// TestSelectCallbackHandsListOff runs package-level selects over one case
// list from three goroutines in turn, each handing the list to the next
// from the winner's callback. A call must be done with the list's kept
// state before the callback runs, since the next goroutine selects over the
// list while the first is still inside its call. Run with -race: a write to
// the kept state after the callback is a data race the detector reports.
func TestSelectCallbackHandsListOff(t *testing.T) {
	const workers, rounds = 3, 600
	c := chans.New[int](chans.Unbounded)
	turn := make([]chan struct{}, workers)
	for i := range turn {
		turn[i] = make(chan struct{}, 1)
	}
	n, sum := 0, 0
	cases := []chans.Case{chans.OnRecv(c, func(v int, _ bool) {
		n++
		sum += v
		turn[n%workers] <- struct{}{} // the next goroutine selects over the list
	})}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				<-turn[w]
				chans.Select(cases...)
			}
		}()
	}
	for i := range workers * rounds {
		if err := c.Send(i); err != nil {
			t.Fatal(err)
		}
	}
	turn[0] <- struct{}{}
	wg.Wait()
	if want := workers * rounds * (workers*rounds - 1) / 2; n != workers*rounds || sum != want {
		t.Fatalf("received %d values summing to %d, want %d summing to %d", n, sum, workers*rounds, want)
	}
}
