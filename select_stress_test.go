package chans_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/scalable-go/chans"
)

// TestSelectStressConservation mixes selects with plain operations, Close
// and cancellation on two channels of each kind, and checks conservation:
// every value whose send reported success (Send, SendContext or TrySend
// returning nil, or an OnSend callback with err == nil) is received exactly
// once, and no other value is ever received. Every value is unique (its
// goroutine in the high bits), so a value delivered by a losing case, by a
// cancelled SendContext or SelectContext, or by a send that failed with
// ErrClosed, shows up as "received but never sent successfully"; a value
// taken by a losing receive case or a cancelled receive shows up as "sent
// but never received"; a duplicate as "received twice". Each select also
// checks that exactly one callback ran, for the index it returned, before it
// returned (callbacks write plain variables of the selecting goroutine, so
// under -race a callback run elsewhere is a reported race).
//
// Roles, chosen so that no goroutine waits forever:
//   - producers make random operations: blocking Send, SendContext and
//     TrySend on a or b; Select over sends on a and b; SelectContext and
//     TrySelect over sends on both plus a receive (self-select on a
//     channel that also carries the producer's own sends); SelectContext of
//     a reused receive-only Selector. Producer 0 closes a halfway through;
//   - one consumer receives from a with Recv, one from b with RecvContext
//     and TryRecv, two with Select, SelectContext, TrySelect and a Selector
//     over both, until both channels are closed and drained;
//   - the test closes b once every producer has finished.
//
// Contexts are random: already done, never done (except for the producers'
// receive-only selects), or timing out after 0-50µs, so cancellation hits
// operations at random points of their protocol.
func TestSelectStressConservation(t *testing.T) {
	ops, rounds := 10000, 4
	if raceEnabled {
		ops, rounds = 4000, 3
	}
	if testing.Short() {
		ops, rounds = ops/5, 1
	}
	forEachSelKind(t, func(t *testing.T, capacity int) {
		for round := 0; round < rounds; round++ {
			selStressRound(t, capacity, uint64(round), ops)
			if t.Failed() {
				return
			}
		}
	})
}

const (
	selProducers = 3
	selConsumers = 4
)

// selLog is what one goroutine of the stress did: the values it sent with
// success and the values it received.
type selLog struct {
	sent, got []int
	err       string // first problem seen by the goroutine itself
}

func (l *selLog) fail(format string, args ...any) {
	if l.err == "" {
		l.err = fmt.Sprintf(format, args...)
	}
}

// selCtx returns a random context for one operation: already done (1/4),
// never done (1/4, only if forever), or timing out after 0-50µs; and its
// cancel function.
func selCtx(r *rand.Rand, forever bool) (context.Context, context.CancelFunc) {
	n := 3
	if forever {
		n = 4
	}
	switch r.IntN(n) {
	case 0:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	case 3:
		return context.Background(), func() {}
	default:
		return context.WithTimeout(context.Background(), time.Duration(r.IntN(50))*time.Microsecond)
	}
}

func selStressRound(t *testing.T, capacity int, seed uint64, ops int) {
	chs := []*chans.Chan[int]{chans.New[int](capacity), chans.New[int](capacity)}
	a, b := chs[0], chs[1]
	logs := make([]selLog, selProducers+selConsumers)
	var prod, cons sync.WaitGroup

	for p := 0; p < selProducers; p++ {
		prod.Add(1)
		go func() {
			defer prod.Done()
			selProduce(&logs[p], p, rand.New(rand.NewPCG(seed, uint64(p))), a, b, ops, p == 0)
		}()
	}
	cons.Add(selConsumers)
	go func() { // plain Recv on a
		defer cons.Done()
		l := &logs[selProducers]
		for v := range a.All() {
			l.got = append(l.got, v)
		}
	}()
	go func() { // RecvContext and TryRecv on b
		defer cons.Done()
		l := &logs[selProducers+1]
		r := rand.New(rand.NewPCG(seed, 100))
		for {
			var v int
			var err error
			if r.IntN(4) == 0 {
				if v, err = b.TryRecv(); err == chans.ErrEmpty {
					runtime.Gosched()
				}
			} else {
				ctx, cancel := selCtx(r, true)
				v, err = b.RecvContext(ctx)
				cancel()
			}
			switch err {
			case nil:
				l.got = append(l.got, v)
			case chans.ErrClosed:
				return
			}
		}
	}()
	for k := 2; k < selConsumers; k++ {
		go func() {
			defer cons.Done()
			selConsume(&logs[selProducers+k], rand.New(rand.NewPCG(seed, uint64(100+k))), chs)
		}()
	}

	done := make(chan struct{})
	go func() {
		prod.Wait()
		_ = b.Close()
		cons.Wait()
		close(done)
	}()
	// A round takes a few seconds at most under -race with perturbation.
	selWaitFor(t, done, fmt.Sprintf("stress round %d", seed), 60*time.Second, func() {
		_ = a.Close() // unblocks everything but a livelock
		_ = b.Close()
	})

	var sent, got []int
	for i := range logs {
		if logs[i].err != "" {
			t.Fatalf("goroutine %d: %s", i, logs[i].err)
		}
		sent = append(sent, logs[i].sent...)
		got = append(got, logs[i].got...)
	}
	for i, c := range chs {
		if v, err := c.TryRecv(); err != chans.ErrClosed {
			t.Fatalf("channel %d after the stress: TryRecv gave (%d, %v), want ErrClosed", i, v, err)
		}
	}
	selCheckSame(t, sent, got)
	if seed == 0 {
		t.Logf("round 0: %d values sent and received; %d received by selects in producers", len(sent), len(got)-len(logs[selProducers].got)-len(logs[selProducers+1].got)-len(logs[selProducers+2].got)-len(logs[selProducers+3].got))
	}
	if len(sent) == 0 {
		t.Fatal("no value was sent")
	}
}

// selProduce runs one producer: ops random operations, each with fresh
// unique values (value(id, sequence number)).
func selProduce(l *selLog, id int, r *rand.Rand, a, b *chans.Chan[int], ops int, closer bool) {
	seq := 0
	next := func() int { seq++; return value(id, seq) }
	chs := []*chans.Chan[int]{a, b}

	// One select's outcome: which callbacks ran, and what they saw.
	var ran []int
	var errs [3]error
	var rv int
	var rok bool
	onSend := func(j int) func(error) {
		return func(err error) { ran = append(ran, j); errs[j] = err }
	}
	onRecv := func(j int) func(int, bool) {
		return func(v int, ok bool) { ran = append(ran, j); rv, rok = v, ok }
	}
	recvSel := chans.NewSelector(chans.OnRecv(a, onRecv(0)), chans.OnRecv(b, onRecv(1)))

	// check verifies one select's outcome: exactly one callback, for index j
	// (or none for j == -1); records the sent or received value.
	check := func(what string, j int, vs []int, recvAt int) {
		switch {
		case j == -1 && len(ran) == 0:
		case j == -1 || len(ran) != 1 || ran[0] != j:
			l.fail("%s returned %d but callbacks %v ran", what, j, ran)
		case j == recvAt:
			if rok {
				l.got = append(l.got, rv)
			}
		case errs[j] == nil:
			l.sent = append(l.sent, vs[j])
		case errs[j] != chans.ErrClosed:
			l.fail("%s: send case %d got error %v", what, j, errs[j])
		}
		ran = ran[:0]
	}

	for i := 0; i < ops; i++ {
		if closer && i == ops/2 {
			if err := a.Close(); err != nil {
				l.fail("Close: %v", err)
			}
		}
		if r.IntN(16) == 0 {
			runtime.Gosched() // vary the interleavings
		}
		c := chs[r.IntN(2)]
		switch op := r.IntN(8); op {
		case 0, 1, 2: // plain sends
			v := next()
			var err error
			switch op {
			case 0:
				err = c.Send(v)
			case 1:
				ctx, cancel := selCtx(r, true)
				err = c.SendContext(ctx, v)
				cancel()
			case 2:
				err = c.TrySend(v)
			}
			if err == nil {
				l.sent = append(l.sent, v)
			}
		case 3: // Select over two sends
			vs := []int{next(), next()}
			j := chans.Select(chans.OnSend(a, vs[0], onSend(0)), chans.OnSend(b, vs[1], onSend(1)))
			check("Select", j, vs, -1)
		case 4, 5: // SelectContext over two sends and a receive
			vs := []int{next(), next()}
			ctx, cancel := selCtx(r, true)
			j, err := chans.SelectContext(ctx, chans.OnSend(a, vs[0], onSend(0)), chans.OnSend(b, vs[1], onSend(1)), chans.OnRecv(c, onRecv(2)))
			if (j == -1) != (err != nil) || (err != nil && err != ctx.Err()) {
				l.fail("SelectContext returned (%d, %v), ctx.Err() %v", j, err, ctx.Err())
			}
			cancel()
			check("SelectContext", j, vs, 2)
		case 6: // TrySelect over two sends and a receive
			vs := []int{next(), next()}
			j, ok := chans.TrySelect(chans.OnRecv(c, onRecv(0)), chans.OnSend(a, vs[0], onSend(1)), chans.OnSend(b, vs[1], onSend(2)))
			if ok != (j >= 0) {
				l.fail("TrySelect returned (%d, %v)", j, ok)
			}
			check("TrySelect", j, []int{0, vs[0], vs[1]}, 0)
		case 7: // a reused Selector's SelectContext over both receives
			ctx, cancel := selCtx(r, false) // producers must not all wait for a send
			j, _ := recvSel.SelectContext(ctx)
			cancel()
			check("Selector.SelectContext", j, nil, j)
		}
	}
}

// selConsume receives from chs with selects until every channel is closed
// and drained.
func selConsume(l *selLog, r *rand.Rand, chs []*chans.Chan[int]) {
	live := append([]*chans.Chan[int](nil), chs...)
	var ran []int
	var rv int
	var rok bool
	onRecv := func(j int) func(int, bool) {
		return func(v int, ok bool) { ran = append(ran, j); rv, rok = v, ok }
	}
	var sel *chans.Selector
	var cases []chans.Case
	rebuild := func() {
		cases = cases[:0]
		for j, c := range live {
			cases = append(cases, chans.OnRecv(c, onRecv(j)))
		}
		sel = chans.NewSelector(cases...)
	}
	rebuild()
	for len(live) > 0 {
		var j int
		switch r.IntN(4) {
		case 0:
			j = chans.Select(cases...)
		case 1:
			j = sel.Select()
		case 2:
			ctx, cancel := selCtx(r, true)
			var err error
			j, err = chans.SelectContext(ctx, cases...)
			if (j == -1) != (err != nil) || (err != nil && err != ctx.Err()) {
				l.fail("SelectContext returned (%d, %v), ctx.Err() %v", j, err, ctx.Err())
			}
			cancel()
		case 3:
			var ok bool
			if j, ok = sel.TrySelect(); !ok {
				runtime.Gosched()
			}
		}
		switch {
		case j == -1 && len(ran) == 0:
		case j == -1 || len(ran) != 1 || ran[0] != j:
			l.fail("select returned %d but callbacks %v ran", j, ran)
			return
		case rok:
			l.got = append(l.got, rv)
		default: // closed and drained
			live = append(live[:j], live[j+1:]...)
			rebuild()
		}
		ran = ran[:0]
	}
}
