package chans

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// Tests of bounded.go's "Buffer end": until the first send that may give up
// its cell, each receive ticket r expands cell r + capacity with no ticket
// from B (expandImplicit); holesOn switches the channel once, at a receive
// count R0, after which tickets at or past R0 expand with tickets from B.
// As in rules_test.go, each test replays a schedule by hand (taking tickets
// and running cell steps itself) and uses a goroutine only for an operation
// that must park. Each doc comment names the claim and the breakage of the
// code that the test was seen to catch.

// awaitParked waits, yielding, until cell idx holds a registration whose
// owner has parked (parked), and returns it.
func awaitParked[T any](c *Chan[T], idx uint64) *waiter {
	for {
		if cl := c.findCell(idx); cl != nil {
			if st := cl.state.Load(); parked(st) {
				return st
			}
		}
		runtime.Gosched()
	}
}

// handRecv takes the next receive ticket by hand and runs its cell step as
// a TryRecv would; the ticket's expansion is left to the caller (expandFor).
func handRecv[T any](t *testing.T, c *Chan[T]) (uint64, *segment[T], T) {
	t.Helper()
	start := c.recvSeg.Load()
	r := c.r.Add(1) - 1
	seg := c.cellSeg(&c.recvSeg, start, r)
	v, out := c.recvCell(seg, int(r&segMask), r, &party[T]{m: modeTry})
	if out != outOK {
		t.Fatalf("receive of cell %d: outcome %d, want a value", r, out)
	}
	return r, seg, v
}

// counters reports whether holeFrom, B and settled are as given, and
// reports them to t where they are not.
func counters[T any](t *testing.T, c *Chan[T], what string, holeFrom, b, settled uint64) bool {
	t.Helper()
	h, gb, gs := c.holeFrom.Load(), c.b.Load(), c.settled.Load()
	if h == holeFrom && gb == b && gs == settled {
		return true
	}
	t.Errorf("cap %d, %s: holeFrom %#x, B %d, settled %d; want %#x, %d, %d",
		c.capacity, what, h, gb, gs, holeFrom, b, settled)
	return false
}

// noHolesYet reports whether the channel is still before its first hole:
// holeFrom = noHoles, B = capacity and settled = 0.
func noHolesYet[T any](t *testing.T, c *Chan[T], what string) bool {
	t.Helper()
	return counters(t, c, what, noHoles, uint64(c.capacity), 0)
}

// drainAll receives with TryRecv until the channel reports empty or closed,
// claiming any parked sender on the way: the cleanup of a test whose sender
// was left parked by the broken rule it checks.
func drainAll[T any](c *Chan[T]) {
	for {
		if _, err := c.TryRecv(); err != nil {
			return
		}
	}
}

// wantRecv receives with TryRecv and checks the value.
func wantRecv(t *testing.T, c *Chan[int], want int) {
	t.Helper()
	if v, err := c.TryRecv(); err != nil || v != want {
		t.Errorf("cap %d: TryRecv = %v, %v; want %d", c.capacity, v, err, want)
	}
}

// wantOneSlot checks that the empty channel c of capacity 1 takes exactly
// one value (2) and gives it back, and that the invariants hold then.
func wantOneSlot(t *testing.T, c *Chan[int]) {
	t.Helper()
	if err := c.TrySend(2); err != nil {
		t.Errorf("TrySend into an empty channel = %v", err)
	}
	if err := c.TrySend(3); err != ErrFull {
		t.Errorf("TrySend into a full buffer = %v, want ErrFull", err)
	}
	wantRecv(t, c, 2)
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestImplicitExpansionBeforeHoles checks that before any hole a buffered
// channel's traffic (TrySend, TryRecv, Send and Recv that park, SendMany,
// RecvMany, TryRecvMany) moves neither B nor settled, gives values in FIFO
// order and the right full and empty verdicts, and that a receive's implicit
// expansion (of cell r + capacity) claims a sender parked on the full buffer,
// for a plain TryRecv and for a receive batch, at capacities within one
// segment and spanning several.
//
// Breakages it was seen to catch: expandFor always taking a ticket from B
// (B moves); expandImplicit returning at once (the parked sender stays
// parked); recvBatch's implicit branch disabled (B moves); fullCheck
// without its noHoles shortcut (a full verdict waits for expansions that
// are never counted).
func TestImplicitExpansionBeforeHoles(t *testing.T) {
	for _, k := range []int{1, 2, segSize - 1, segSize, segSize + 1, 2*segSize + 1} {
		implicitTraffic(t, k)
	}
}

func implicitTraffic(t *testing.T, k int) {
	c := newCells[int](k)
	var q []int // the values buffered, oldest first
	next := 0   // the next value to send
	if _, err := c.TryRecv(); err != ErrEmpty {
		t.Fatalf("cap %d: TryRecv on a new channel = %v, want ErrEmpty", k, err)
	}
	for len(q) < k {
		if err := c.TrySend(next); err != nil {
			t.Fatalf("cap %d: TrySend(%d) with %d values buffered = %v", k, next, len(q), err)
		}
		q, next = append(q, next), next+1
	}
	if err := c.TrySend(next); err != ErrFull {
		t.Errorf("cap %d: TrySend into a full buffer = %v, want ErrFull", k, err)
	}
	if n := c.Len(); n != k {
		t.Errorf("cap %d: Len = %d, want %d", k, n, k)
	}
	if !noHolesYet(t, c, "after filling the buffer") {
		return
	}

	// A Send parks on the full buffer, in cell k. A TryRecv takes ticket 0
	// and q[0]; its implicit expansion of cell 0 + k claims the sender.
	sent := make(chan error, 1)
	go func(v int) { sent <- c.Send(v) }(next)
	q, next = append(q, next), next+1
	awaitParked(c, uint64(k))
	if !noHolesYet(t, c, "with a sender parked") {
		drainAll(c)
		<-sent
		return
	}
	wantRecv(t, c, q[0])
	q = q[1:]
	if st := c.findCell(uint64(k)).state.Load(); st != stBuffered {
		t.Errorf("cap %d: after the receive of ticket 0 the parked sender's cell %d is %s, want buffered (claimed by the implicit expansion)", k, k, stateName(st))
		drainAll(c) // the receiver of cell k claims it
		<-sent
		return
	}
	if err := <-sent; err != nil {
		t.Errorf("cap %d: the parked Send = %v", k, err)
	}
	if !noHolesYet(t, c, "after the implicit expansion claimed the sender") {
		return
	}

	// Full again, with receive tickets ahead of settled: before any hole the
	// verdict stands at once (no expansion is owed).
	if v := c.fullCheck(c.s.Load() & counterMask); v != roomNo {
		t.Errorf("cap %d: full buffer, no hole: verdict %d, want roomNo (%d)", k, v, roomNo)
		return // TrySend would wait for an expansion that is never counted
	}
	if err := c.TrySend(next); err != ErrFull {
		t.Errorf("cap %d: TrySend into a full buffer = %v, want ErrFull", k, err)
	}

	// Batches: take up to two, send as many back, take everything.
	dst := make([]int, k+1)
	n, err := c.TryRecvMany(dst[:min(2, k)])
	if err != nil || !slices.Equal(dst[:n], q[:min(2, k)]) {
		t.Errorf("cap %d: TryRecvMany = %v, %v; want %v", k, dst[:n], err, q[:min(2, k)])
	}
	q = q[n:]
	vs := make([]int, n)
	for i := range vs {
		vs[i], next = next, next+1
	}
	if m, err := c.SendMany(vs); m != n || err != nil {
		t.Errorf("cap %d: SendMany of %d into as much room = %d, %v", k, n, m, err)
	}
	q = append(q, vs...)
	if err := c.TrySend(next); err != ErrFull {
		t.Errorf("cap %d: TrySend into a full buffer = %v, want ErrFull", k, err)
	}
	if n, err := c.RecvMany(dst); err != nil || !slices.Equal(dst[:n], q) {
		t.Errorf("cap %d: RecvMany = %v, %v; want %v", k, dst[:n], err, q)
	}
	q = q[:0]
	if _, err := c.TryRecv(); err != ErrEmpty {
		t.Errorf("cap %d: TryRecv on the drained channel = %v, want ErrEmpty", k, err)
	}
	if !noHolesYet(t, c, "after batches") {
		return
	}

	// A Recv parks on the empty channel (its expansion ran before it
	// parked); a TrySend hands it a value.
	got := make(chan int, 1)
	go func() { v, _ := c.Recv(); got <- v }()
	awaitParked(c, c.s.Load()&counterMask)
	if err := c.TrySend(next); err != nil {
		t.Errorf("cap %d: TrySend to a parked receiver = %v", k, err)
	}
	if v := <-got; v != next {
		t.Errorf("cap %d: the parked Recv got %d, want %d", k, v, next)
	}
	next++

	// Fill again with SendMany; a SendMany of one more parks; a receive
	// batch's implicit expansion of its first ticket claims it.
	vs = make([]int, k)
	for i := range vs {
		vs[i], next = next, next+1
	}
	if m, err := c.SendMany(vs); m != k || err != nil {
		t.Errorf("cap %d: SendMany of %d into an empty buffer = %d, %v", k, k, m, err)
	}
	q = append(q, vs...)
	park := c.s.Load() & counterMask
	manyDone := make(chan error, 1)
	go func(v int) {
		_, err := c.SendMany([]int{v})
		manyDone <- err
	}(next)
	q = append(q, next)
	awaitParked(c, park)
	if n, err := c.TryRecvMany(dst[:k]); err != nil || !slices.Equal(dst[:n], q[:k]) {
		t.Errorf("cap %d: TryRecvMany = %v, %v; want %v", k, dst[:n], err, q[:k])
	}
	q = q[k:]
	if st := c.findCell(park).state.Load(); st != stBuffered {
		t.Errorf("cap %d: after the receive batch the parked sender's cell %d is %s, want buffered (claimed by the batch's implicit expansion)", k, park, stateName(st))
		drainAll(c)
		<-manyDone
		return
	}
	if err := <-manyDone; err != nil {
		t.Errorf("cap %d: the parked SendMany = %v", k, err)
	}
	wantRecv(t, c, q[0])
	if _, err := c.TryRecv(); err != ErrEmpty {
		t.Errorf("cap %d: TryRecv on the drained channel = %v, want ErrEmpty", k, err)
	}
	noHolesYet(t, c, "at the end")
	if err := CheckInvariants(c); err != nil {
		t.Errorf("cap %d: %v", k, err)
	}
}

// TestHolesSwitchImplicitThenExplicit replays the switch at capacities 2
// and segSize + 1. A receive takes ticket 0 and its value and pauses before
// its expansion; a TrySend fills the buffer (room below R + capacity), and a
// send finds no room and parks; its context fires, and it switches the
// channel (R0 = 1, B = 1 + capacity, settled = 1) and gives its cell up, a
// hole at R0 + capacity. The
// paused receive took its ticket before the switch and expands implicitly
// (B and settled stay); the next receive expands explicitly, pays the hole
// and takes another ticket (B = R0 + capacity + 2). At quiescence
// CheckInvariants passes; the channel, holding capacity - 1 values, takes
// exactly one more value (the hole is paid once: no spurious ErrFull, no
// extra room), and FIFO order holds.
//
// Breakages it was seen to catch: expandFor always implicit (the hole is
// paid by the implicit fallback against B's first ticket, B ends one short:
// ErrFull on a channel with room); expandFor always explicit (the paused
// receive takes a ticket from B); holesOn dropped from await (the hole
// appears with holeFrom = noHoles); holesOn not storing settled (the last
// TrySend's full verdict then waits forever for an expansion that is never
// counted: a hang, reported by go test's -timeout).
func TestHolesSwitchImplicitThenExplicit(t *testing.T) {
	for _, k := range []int{2, segSize + 1} {
		c := newCells[int](k)
		for v := range k {
			if err := c.TrySend(v); err != nil {
				t.Fatal(err)
			}
		}
		rA, segA, v := handRecv(t, c)
		if rA != 0 || v != 0 {
			t.Fatalf("cap %d: receive A: ticket %d, value %d; want 0, 0", k, rA, v)
		}
		if err := c.TrySend(k); err != nil { // ticket k < R + capacity
			t.Fatalf("cap %d: TrySend(%d) = %v", k, k, err)
		}
		if !noHolesYet(t, c, "before the switch") {
			continue
		}
		s := cancelSend(t, c, k+1)
		r0 := uint64(1) // receive A's ticket came first
		if !counters(t, c, "after the switch", r0, r0+uint64(k), r0) {
			continue
		}
		if st := c.findCell(s).state.Load(); s != r0+uint64(k) || st != stCancelledSend {
			t.Fatalf("cap %d: the cancelled send's cell %d is %s, want the hole at %d", k, s, stateName(st), r0+uint64(k))
		}

		c.expandFor(rA, segA, true) // implicit: ticket 0 < R0
		if !counters(t, c, "after receive A's implicit expansion", r0, r0+uint64(k), r0) {
			continue
		}
		wantRecv(t, c, 1) // ticket 1 = R0: explicit; pays the hole, takes another ticket
		if !counters(t, c, "after receive B's explicit expansion", r0, r0+uint64(k)+2, 2) {
			continue
		}
		if err := CheckInvariants(c); err != nil {
			t.Errorf("cap %d: %v", k, err)
		}

		// Values 2..k are buffered: capacity - 1 of them.
		if err := c.TrySend(k + 2); err != nil {
			t.Errorf("cap %d: TrySend with %d values buffered = %v (the hole counted as a value)", k, k-1, err)
		}
		if err := c.TrySend(k + 3); err != ErrFull {
			t.Errorf("cap %d: TrySend into a full buffer = %v, want ErrFull (the hole counted twice)", k, err)
		}
		for v := 2; v <= k; v++ {
			wantRecv(t, c, v)
		}
		wantRecv(t, c, k+2)
		if _, err := c.TryRecv(); err != ErrEmpty {
			t.Errorf("cap %d: TryRecv on the drained channel = %v, want ErrEmpty", k, err)
		}
		if err := CheckInvariants(c); err != nil {
			t.Errorf("cap %d: %v", k, err)
		}
	}
}

// TestHolePaidByItsReceiverAfterSwitch replays a switch at R0 = 0 (capacity
// 1): a send into the full buffer parks and its context fires: it switches
// and leaves a hole in cell 1.
// A receive then takes ticket 0, after the switch, so its expansion is
// explicit and owed: a full verdict must wait for it (roomWait), not stand.
// The hole's own receiver (ticket 1) comes first and pays the hole with an
// expansion of its own; the paused expansion then takes the next ticket.
// B ends at capacity + R, the channel takes exactly one value, and
// CheckInvariants passes.
//
// Breakages it was seen to catch: expandFor always implicit (the hole's
// receiver expands implicitly past S, B and settled are left behind, and a
// later full verdict would wait forever); fullCheck's noHoles shortcut taken
// regardless of holeFrom (a full verdict while an expansion is owed);
// holesOn dropped from await (no switch).
func TestHolePaidByItsReceiverAfterSwitch(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(0); err != nil {
		t.Fatal(err)
	}
	cancelSend(t, c, 1)
	if !counters(t, c, "after the switch", 0, 1, 0) {
		return
	}
	rA, segA, v := handRecv(t, c)
	if v != 0 {
		t.Fatalf("receive A got %d, want 0", v)
	}
	if vd := c.fullCheck(c.s.Load() & counterMask); vd != roomWait {
		t.Errorf("full check with receive A's explicit expansion owed: verdict %d, want roomWait (%d)", vd, roomWait)
	}
	if _, err := c.TryRecv(); err != ErrEmpty { // ticket 1: pays the hole, expands, restarts
		t.Errorf("TryRecv past the hole = %v, want ErrEmpty", err)
	}
	if !counters(t, c, "after the hole's receiver paid it", 0, 2, 1) {
		return
	}
	c.expandFor(rA, segA, true) // explicit: ticket 0 ≥ R0
	if !counters(t, c, "after receive A's expansion", 0, 3, 2) {
		return
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
	wantOneSlot(t, c)
}

// TestHolesCtxSenderOutsideWindow replays a Send parked on a full buffer
// (capacity 1, cell 1) whose context fires while the cell is outside the
// buffer window. Parking does not switch the channel; the withdrawal does,
// before its room check (await calls holesOn), so the hole it leaves lies
// past R0 + capacity and is paid explicitly: afterwards holeFrom = 0, the
// receive of the one value pays the hole, and the channel takes exactly one
// value again.
//
// Breakage it was seen to catch: holesOn dropped from await (a hole with
// holeFrom = noHoles; the implicit expansion that meets it pays it against
// B's first ticket, and TrySend then says ErrFull on an empty channel).
func TestHolesCtxSenderOutsideWindow(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan error, 1)
	go func() { sent <- c.SendContext(ctx, 1) }()
	awaitParked(c, 1)
	noHolesYet(t, c, "with a sender parked")
	cancel()
	if err := <-sent; err != context.Canceled {
		t.Fatalf("SendContext outside the window = %v, want context.Canceled", err)
	}
	if st := c.findCell(1).state.Load(); st != stCancelledSend {
		t.Errorf("the withdrawn sender's cell is %s, want cancelledSend", stateName(st))
	}
	ok := counters(t, c, "after the withdrawal", 0, 1, 0)
	wantRecv(t, c, 0) // ticket 0 = R0: explicit; pays the hole in cell 1
	if ok {
		counters(t, c, "after the receive", 0, 3, 1)
	}
	wantOneSlot(t, c)
}

// TestHolesCtxSenderInsideWindow replays a Send parked on a full buffer
// (capacity 1, cell 1) that a receive brings inside the window: the receive
// takes ticket 0 and its value and pauses before its expansion. The
// sender's context fires: it switches the channel (at R0 = 1, the receive's
// ticket came first) and, inside the window, does not withdraw. The paused
// receive's ticket is below R0, so its expansion is implicit and claims the
// sender without touching B or settled.
//
// Breakages it was seen to catch: expandFor always explicit (the
// expansion takes B's ticket 2, past S, and never claims the sender);
// expandImplicit returning at once; asBuffered constant false (the sender
// withdraws); holesOn dropped from await (no switch).
func TestHolesCtxSenderInsideWindow(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan error, 1)
	go func() { sent <- c.SendContext(ctx, 1) }()
	w := awaitParked(c, 1)
	cl := c.findCell(1)
	rA, segA, v := handRecv(t, c)
	if v != 0 {
		t.Fatalf("receive A got %d, want 0", v)
	}
	cancel()
	yieldWhile(func() bool { return c.holeFrom.Load() == noHoles })
	yieldWhile(func() bool { return cl.state.Load() == w })
	if st := cl.state.Load(); st != w {
		t.Errorf("the sender parked inside the window left its cell (now %s) when its context fired", stateName(st))
	}
	counters(t, c, "after the context fired", 1, 2, 1)

	c.expandFor(rA, segA, true) // implicit: ticket 0 < R0 = 1
	if st := cl.state.Load(); st != stBuffered {
		t.Errorf("after receive A's expansion the sender's cell is %s, want buffered (claimed by the implicit expansion)", stateName(st))
		drainAll(c)
		<-sent
		return
	}
	counters(t, c, "after the implicit expansion", 1, 2, 1)
	if err := <-sent; err != nil {
		t.Errorf("SendContext inside the window = %v, want nil", err)
	}
	wantRecv(t, c, 1)
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestHolesCloseSwitchesBeforeRoom replays a Close of a full buffer with a
// Send parked past it (capacities 1 and segSize + 1): beginClose switches
// the channel before it reads the room (holeFrom = R, B = R + capacity
// once it returns), so the hole that Close's walk leaves in the sender's
// cell lies past R0 + capacity and is paid explicitly; the values still
// drain in order and CheckInvariants passes.
//
// Breakage it was seen to catch: holesOn dropped from beginClose (Close
// leaves a hole with holeFrom = noHoles; CheckInvariants then finds B and
// settled moved by the implicit expansion's fallback). Moving holesOn after
// the loads of R and B is not caught: that needs a receive ticket taken
// between them, which no replay can place inside beginClose.
func TestHolesCloseSwitchesBeforeRoom(t *testing.T) {
	for _, k := range []int{1, segSize + 1} {
		c := newCells[int](k)
		for v := range k {
			if err := c.TrySend(v); err != nil {
				t.Fatal(err)
			}
		}
		sent := make(chan error, 1)
		go func() { sent <- c.Send(k) }()
		awaitParked(c, uint64(k))
		noHolesYet(t, c, "with a sender parked")
		end := c.beginClose()
		counters(t, c, "after beginClose", 0, uint64(k), 0)
		if end != uint64(k) {
			t.Errorf("cap %d: Close read room %d, want %d", k, end, k)
		}
		if err := c.finishClose(end); err != nil {
			t.Fatal(err)
		}
		if err := <-sent; err != ErrClosed {
			t.Errorf("cap %d: the Send parked past the room at Close = %v, want ErrClosed", k, err)
		}
		if st := c.findCell(uint64(k)).state.Load(); st != stCancelledSend {
			t.Errorf("cap %d: the failed sender's cell is %s, want cancelledSend", k, stateName(st))
		}
		for v := range k {
			wantRecv(t, c, v)
		}
		if _, err := c.TryRecv(); err != ErrClosed {
			t.Errorf("cap %d: TryRecv on the closed, drained channel = %v, want ErrClosed", k, err)
		}
		if err := CheckInvariants(c); err != nil {
			t.Errorf("cap %d: %v", k, err)
		}
	}
}

// TestHolesSelectSendSwitches replays a select whose send case registers on
// a full buffer (capacity 1, cell 1) and is withdrawn when its context
// fires: a hole. The select's send switched the channel before it took its
// ticket (sendOp calls holesOn in modeSelect), so holeFrom = 0 while it is
// parked, and the hole is paid explicitly: the channel then takes exactly
// one value.
//
// Breakage it was seen to catch: holesOn dropped from sendOp's select path
// (the withdrawn case leaves a hole with holeFrom = noHoles, and TrySend
// says ErrFull on an empty channel).
func TestHolesSelectSendSwitches(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(0); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		j   int
		err error
	}
	res := make(chan result, 1)
	go func() {
		j, err := SelectContext(ctx, OnSend(c, 1, nil))
		res <- result{j, err}
	}()
	awaitParked(c, 1)
	ok := counters(t, c, "with the select's send case registered", 0, 1, 0)
	cancel()
	if r := <-res; r.j != -1 || r.err != context.Canceled {
		t.Fatalf("SelectContext = %d, %v; want -1, context.Canceled", r.j, r.err)
	}
	if st := c.findCell(1).state.Load(); st != stCancelledSend {
		t.Errorf("the withdrawn case's cell is %s, want cancelledSend", stateName(st))
	}
	wantRecv(t, c, 0) // pays the hole in cell 1
	if ok {
		counters(t, c, "after the receive", 0, 3, 1)
	}
	wantOneSlot(t, c)
}

// TestImplicitExpansionBehindBufSeg replays two implicit expansions that
// run out of ticket order (capacity 2·segSize, so that their targets lie in
// different segments). Receives take tickets segSize-1 (in segment 0,
// target cell 3·segSize-1 in segment 2) and segSize (segment 1, target
// 3·segSize in segment 3), with a Send parked in each target. The later
// ticket expands first and moves the bufSeg root to segment 3; the earlier
// one then finds the root past its target and must walk from its own
// segment (expandImplicit falls back to own) to claim the sender parked in
// its target cell. No hole appears: B and settled stay.
//
// Breakage it was seen to catch: expandImplicit without the fallback to own
// (its walk starts past the target, takes the segment for removed, and the
// sender stays parked).
func TestImplicitExpansionBehindBufSeg(t *testing.T) {
	k := 2 * segSize
	c := newCells[int](k)
	next := 0
	for range k { // cells 0..k-1
		if err := c.TrySend(next); err != nil {
			t.Fatal(err)
		}
		next++
	}
	q := []int{}
	for v := range k {
		q = append(q, v)
	}
	for range segSize - 1 { // tickets 0..segSize-2
		wantRecv(t, c, q[0])
		q = q[1:]
	}
	for range segSize - 1 { // cells k..k+segSize-2: the buffer is full again
		if err := c.TrySend(next); err != nil {
			t.Fatal(err)
		}
		q, next = append(q, next), next+1
	}
	x, y := uint64(3*segSize-1), uint64(3*segSize)
	if s := c.s.Load() & counterMask; s != x {
		t.Fatalf("S = %d, want %d", s, x)
	}
	sentX, sentY := make(chan error, 1), make(chan error, 1)
	go func(v int) { sentX <- c.Send(v) }(next) // ticket x, segment 2
	awaitParked(c, x)
	q, next = append(q, next), next+1
	go func(v int) { sentY <- c.Send(v) }(next) // ticket y, segment 3
	awaitParked(c, y)
	q = append(q, next)

	r1, seg1, v1 := handRecv(t, c)
	r2, seg2, v2 := handRecv(t, c)
	if r1 != segSize-1 || r2 != segSize || v1 != q[0] || v2 != q[1] {
		t.Fatalf("receives: tickets %d, %d, values %d, %d; want %d, %d, %d, %d", r1, r2, v1, v2, segSize-1, segSize, q[0], q[1])
	}
	q = q[2:]
	c.expandFor(r2, seg2, true) // target y: claims Y and moves bufSeg to segment 3
	if st := c.findCell(y).state.Load(); st != stBuffered {
		t.Errorf("after the expansion of ticket %d, cell %d is %s, want buffered", r2, y, stateName(st))
	}
	if id := c.bufSeg.Load().id.Load(); id <= x>>segShift {
		t.Errorf("bufSeg is segment %d, not past the earlier target's segment %d: the schedule is not the one this test means", id, x>>segShift)
	}
	c.expandFor(r1, seg1, true) // target x, behind bufSeg
	if st := c.findCell(x).state.Load(); st != stBuffered {
		t.Errorf("after the expansion of ticket %d, cell %d is %s, want buffered (claimed by that expansion)", r1, x, stateName(st))
	}
	noHolesYet(t, c, "after both expansions")
	if t.Failed() {
		drainAll(c) // the receivers of x and y claim what is still parked
		<-sentX
		<-sentY
		return
	}
	if err := <-sentX; err != nil {
		t.Errorf("Send parked in cell %d = %v", x, err)
	}
	if err := <-sentY; err != nil {
		t.Errorf("Send parked in cell %d = %v", y, err)
	}
	for _, v := range q {
		wantRecv(t, c, v)
	}
	if _, err := c.TryRecv(); err != ErrEmpty {
		t.Errorf("TryRecv on the drained channel = %v, want ErrEmpty", err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestHolesSwitchRace races holesOn against a TryRecv on a full buffer
// (capacity 1), on many fresh channels, and checks the quiescent invariants
// after each race. Unlike the replays above it is a stress test: the claim
// it checks lives between two atomic steps of holesOn, where no replay can
// stop it. The claim: every receive ticket is counted once, either as
// implicit (below R0, and in the settled = R0 that holesOn stores) or as
// explicit (at or past R0, its expansion taking a ticket from B after B was
// set); so at quiescence settled = R and B = capacity + R. The two parties
// start together on two threads, one of them delayed by a varying spin, so
// that their steps interleave in many ways.
//
// Breakages it was seen to catch: holesOn loading R before its
// CompareAndSwap to holesSwitching (a receive whose ticket is R0 loads
// holeFrom = noHoles and expands implicitly, and is then never counted in
// settled); holesOn storing R0 in holeFrom without the switching step (a
// receive sees R0 and takes a ticket from B before B is set). Both only
// under chans_perturb, whose schedule points widen the window.
func TestHolesSwitchRace(t *testing.T) {
	rounds := 4000
	if testing.Short() {
		rounds = 1000
	}
	for round := range rounds {
		c := newCells[int](1)
		if err := c.TrySend(round); err != nil {
			t.Fatal(err)
		}
		var ready atomic.Int32
		var wg sync.WaitGroup
		wg.Add(2)
		delay := round % 64
		go func() {
			defer wg.Done()
			together(&ready, delay)
			c.holesOn() // as a send does before a room check that may give its cell up
		}()
		var v int
		var err error
		go func() {
			defer wg.Done()
			together(&ready, 0)
			v, err = c.TryRecv()
		}()
		wg.Wait()
		if err != nil || v != round {
			t.Fatalf("round %d: TryRecv = %v, %v; want %d", round, v, err, round)
		}
		if err := CheckInvariants(c); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// together counts the caller in ready and waits, yielding, until both
// parties of a race are there; then it spins for about delay iterations.
func together(ready *atomic.Int32, delay int) {
	ready.Add(1)
	for ready.Load() < 2 {
		runtime.Gosched()
	}
	x := 0
	for i := range delay {
		x += i
	}
	spinSink.Store(int64(x))
}

// spinSink keeps together's spin from being optimized away.
var spinSink atomic.Int64

// TestTrySendRacesLeaveNoHoles runs two producers that drop a value when
// the buffer is full (TrySend, yielding after a failure) against one
// receiver, on buffered channels on cells. No send gives its cell up, so
// the channel never switches to explicit expansions and keeps reusing its
// segments. (When a TrySend took its ticket with a fetch-and-add, two that
// saw one free slot both took one and the second gave its cell up: in
// three runs at GOMAXPROCS 2 the one-slot channel had switched within its
// first 170 values every time, the 64-slot one in two of the three.)
func TestTrySendRacesLeaveNoHoles(t *testing.T) {
	n := 200000
	if testing.Short() {
		n = 40000
	}
	for _, capacity := range []int{1, 64} {
		c := newChan[int](capacity, false, 2)
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n {
					if c.TrySend(i) != nil {
						runtime.Gosched()
					}
				}
			}()
		}
		received := make(chan int)
		go func() {
			k := 0
			for range c.All() {
				k++
			}
			received <- k
		}()
		wg.Wait()
		h, off := c.holeFrom.Load(), c.reuseOff.Load()
		c.Close()
		k := <-received
		if h != noHoles || off {
			t.Errorf("cap %d: after %d TrySends (%d received), holeFrom %d and reuse off %v: a TrySend gave its cell up", capacity, 2*n, k, h, off)
		}
	}
}
