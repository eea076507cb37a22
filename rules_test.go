package chans

import (
	"context"
	"runtime"
	"testing"
)

// Tests that pin down protocol rules of bounded.go's header which the rest
// of the suite exercises only by chance. Each replays a schedule by hand:
// the test takes tickets and runs cell steps itself, and a goroutine is used
// only for an operation that must block. Where a test gives a goroutine the
// chance to do something the rule forbids, it yields a bounded number of
// times and then checks a cell's state: on correct code that state cannot
// change until the test moves on, so the check cannot fail spuriously; on
// code that breaks the rule the goroutine has, in practice, long done the
// forbidden step. internal/mutate's RESULTS.md lists the mutants each test
// kills.

// chances is how many times a test yields to let a goroutine take a step
// that the rule under test forbids.
const chances = 10000

// parked reports whether st is a registration whose owner has parked: a
// select's registration, or a plain one whose owner has committed to block
// (in the runtime or on its token). A plain sender registers before its second look and
// may still claim its own registration until then, so a test that replays
// a schedule around a parked sender waits for this, not for the
// registration alone.
func parked(st *waiter) bool {
	return isWaiter(st) && (st.isSel || st.sleep.state.Load() >= sleepBlocking)
}

// awaitBlocked waits, yielding, until cl holds a registration whose owner
// has parked, and returns it.
func awaitBlocked[T any](cl *cell[T]) *waiter {
	for {
		if st := cl.state.Load(); parked(st) {
			return st
		}
		runtime.Gosched()
	}
}

// cancelSend makes the cell of the next send ticket a hole, as a send does
// that finds no room, parks, and whose context is then cancelled (history
// 10: nil → wS → cancelledSend, after await switches the channel to
// explicit expansions). The buffer must be full and stay so, and nothing
// else may send meanwhile. It returns the ticket.
func cancelSend[T any](t testing.TB, c *Chan[T], v T) uint64 {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, sent := parkSend(t, c, ctx, v)
	cancel()
	if err := <-sent; err != context.Canceled {
		t.Fatalf("cap %d: the send of ticket %d, cancelled while parked: %v, want context.Canceled", c.capacity, s, err)
	}
	if st := c.findCell(s).state.Load(); st != stCancelledSend {
		t.Fatalf("cap %d: cell %d after its send was cancelled: %s, want cancelledSend", c.capacity, s, stateName(st))
	}
	return s
}

// parkSend starts SendContext(ctx, v) on c, whose buffer is full, in a
// goroutine, and returns once that send has parked in its cell: its ticket,
// and the channel its result comes on.
func parkSend[T any](t testing.TB, c *Chan[T], ctx context.Context, v T) (uint64, <-chan error) {
	t.Helper()
	s := c.s.Load() & counterMask
	sent := make(chan error, 1)
	go func() { sent <- c.SendContext(ctx, v) }()
	for {
		if cl := c.findCell(s); cl != nil && parked(cl.state.Load()) {
			return s, sent
		}
		select {
		case err := <-sent:
			t.Fatalf("cap %d: the send of ticket %d returned %v before it parked (the buffer was not full)", c.capacity, s, err)
		default:
		}
		runtime.Gosched()
	}
}

// yieldWhile yields while cond holds, at most chances times.
func yieldWhile(cond func() bool) {
	for i := 0; i < chances && cond(); i++ {
		runtime.Gosched()
	}
}

// TestInWindowSenderKeepsItsPlace replays a plain sender parked on a full
// buffer (capacity 1) that a receive brings inside the buffer window: the
// receive has taken the value in cell 0 and not yet run its expansion, so B
// still ends at cell 1 while R + capacity covers it. Len counts the parked
// sender as buffered, so when its context fires it must not withdraw (the
// in-window parked sender rule, asBuffered, with roomFor's R + capacity
// bound): the expansion, when it comes, delivers the value.
func TestInWindowSenderKeepsItsPlace(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan error, 1)
	go func() { sent <- c.SendContext(ctx, 2) }() // ticket 1: parks in cell 1
	seg := c.sendSeg.Load()
	cl := seg.cell(1)
	awaitBlocked(cl) // until the sender has parked
	w := cl.state.Load()

	// A receive takes ticket 0 and the value in cell 0, and pauses before
	// its buffer expansion.
	r := c.r.Add(1) - 1
	if v, out := c.recvCell(seg, int(r), r, &party[int]{m: modeTry}); out != outOK || v != 1 {
		t.Fatalf("receive of cell 0: %v, outcome %d; want 1", v, out)
	}
	if b := c.b.Load(); b != 1 {
		t.Fatalf("B = %d, want 1 (the receive's expansion has not run)", b)
	}
	if n := c.Len(); n != 1 {
		t.Errorf("Len = %d with a sender parked inside the buffer window, want 1", n)
	}

	cancel()
	yieldWhile(func() bool { return cl.state.Load() == w })
	if st := cl.state.Load(); st != w {
		t.Errorf("the sender parked inside the buffer window left its cell (now %s) when its context fired", stateName(st))
	}

	c.expandFor(r, seg, true) // the receive goes on: its expansion claims the parked sender
	if err := <-sent; err != nil {
		t.Errorf("SendContext = %v; it counted as buffered, so it must deliver", err)
	}
	if v, err := c.TryRecv(); err != nil || v != 2 {
		t.Errorf("TryRecv = %v, %v; want 2", v, err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestCloseRoomCountsPaidHoles replays a Close of a buffer whose end B lies
// past R + capacity because an expansion paid a hole ahead (capacity 1).
// A send gives its cell 1 up (its context fired while it was parked: a
// hole); a receive takes the value in
// cell 0, and its expansion pays the hole and takes the next ticket, so the
// buffer is cell 2 (B = 3, R + capacity = 2). A Send takes ticket 2, which
// has room, and pauses before its cell; a TrySend then says ErrFull,
// counting that Send as the one buffered value. Close must read the room
// as B (Close and the room, beginClose): the paused Send took effect
// before Close and delivers; a room of R + capacity would fail it after
// Close, and the ErrFull would have been given on an empty channel.
func TestCloseRoomCountsPaidHoles(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	cancelSend(t, c, 2) // ticket 1: a hole
	if v, err := c.TryRecv(); err != nil || v != 1 {
		t.Fatalf("TryRecv = %v, %v; want 1", v, err)
	}
	if b, r := c.b.Load(), c.r.Load(); b != 3 || r != 1 {
		t.Fatalf("B = %d, R = %d; want 3 and 1 (the expansion paid the hole in cell 1)", b, r)
	}

	// Y: a Send takes ticket 2 (room: 2 < B) and pauses before its cell.
	yseg := c.sendSeg.Load()
	yt := c.s.Add(1) - 1
	if err := c.TrySend(4); err != ErrFull {
		t.Fatalf("TrySend with Y's value as the one buffered = %v, want ErrFull", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ys := c.cellSeg(&c.sendSeg, yseg, yt)
	if out := c.sendStep(ys, yt, 3, modePark); out != outOK {
		t.Errorf("the send with ticket %d, below B at Close and counted by a full verdict, failed after Close (outcome %d)", yt, out)
	}
	if v, err := c.TryRecv(); err != nil || v != 3 {
		t.Errorf("TryRecv = %v, %v; want 3", v, err)
	}
	if v, err := c.TryRecv(); err != ErrClosed {
		t.Errorf("TryRecv = %v, %v; want ErrClosed", v, err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestReceiveRegisteredAtCloseAtIsDoomed replays a receive whose ticket is
// S at Close (so closeAt): it took the ticket and found its cell empty
// before Close, and registers only after Close's walk has passed that cell.
// No send will come: having registered, it must see Close itself (doomed)
// and withdraw, or it would park forever.
func TestReceiveRegisteredAtCloseAtIsDoomed(t *testing.T) {
	for _, k := range []int{0, 1, Unbounded} {
		c := newCells[int](k)
		seg := c.recvSeg.Load()
		r := c.r.Add(1) - 1 // ticket 0; its cell is empty
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if ca := c.closeAt.Load(); ca != r {
			t.Fatalf("cap %d: closeAt = %d, want %d", k, ca, r)
		}
		p := party[int]{m: modePark}
		cl := seg.cell(int(r & segMask))
		if !c.register(cl, nil, opRecv, &p) {
			t.Fatalf("cap %d: the receive could not register in its empty cell", k)
		}
		c.expandFor(r, seg, true) // as recvOp does, before parking
		if !c.doomed(r, p.own) {
			t.Errorf("cap %d: a receive registered at closeAt after Close does not see Close: it would park forever", k)
			c.giveUp(seg, int(r&segMask), p.own, opRecv) // withdraw it by hand
			continue
		}
		if _, out := c.park(nil, seg, int(r&segMask), &p); out != outClosed {
			t.Errorf("cap %d: the doomed receive's outcome = %d, want outClosed (%d)", k, out, outClosed)
		}
		if err := CheckInvariants(c); err != nil {
			t.Errorf("cap %d: %v", k, err)
		}
	}
}

// TestClaimAfterCloseFailsSenderPastRoom replays a receive whose buffer
// expansion reaches a plain sender parked past the room Close read, after
// Close's OR and before Close's walk (capacity 1). The sender parked on a
// full buffer, so at Close it had no room and took no effect: the claimer
// must fail it (claimSender asks mayDeliver) as the walk would have, not
// deliver a send after Close.
func TestClaimAfterCloseFailsSenderPastRoom(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- c.Send(2) }() // ticket 1: parks in cell 1
	seg := c.sendSeg.Load()
	awaitBlocked(seg.cell(1)) // until the sender has parked
	// Close, up to its walk: it reads the room (1), ORs its bit and stores
	// roomEnd and closeAt.
	end := c.beginClose()
	sc := c.s.Or(closedBit) & counterMask
	c.roomEnd.Store(end)
	c.closeAt.Store(sc)
	if end != 1 || sc != 2 {
		t.Fatalf("Close read room %d and S %d, want 1 and 2", end, sc)
	}
	// A receive takes the value in cell 0; its expansion takes B's ticket 1
	// and claims the parked sender.
	if v, err := c.TryRecv(); err != nil || v != 1 {
		t.Fatalf("TryRecv = %v, %v; want 1", v, err)
	}
	if err := <-sent; err != ErrClosed {
		t.Errorf("the Send parked past the room at Close = %v, want ErrClosed", err)
	}
	// Close's walk would find nothing left to do.
	if v, err := c.TryRecv(); err != ErrClosed {
		t.Errorf("TryRecv = %v, %v; want ErrClosed", v, err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestCloseKeepsInWindowSender replays a Close while a plain sender is
// parked inside the buffer window (capacity 1): it parked on a full buffer,
// and a receive has since taken the value in cell 0 and not yet run its
// expansion. The room Close reads (R + capacity) covers the sender, which
// counts as buffered (Len says 1): Close's walk must leave it to its
// claimer (asBuffered), and the expansion then delivers it.
func TestCloseKeepsInWindowSender(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	sent := make(chan error, 1)
	go func() { sent <- c.Send(2) }() // ticket 1: parks in cell 1
	seg := c.sendSeg.Load()
	awaitBlocked(seg.cell(1)) // until the sender has parked
	// A receive takes ticket 0 and the value in cell 0, and pauses before
	// its buffer expansion.
	r := c.r.Add(1) - 1
	if v, out := c.recvCell(seg, int(r), r, &party[int]{m: modeTry}); out != outOK || v != 1 {
		t.Fatalf("receive of cell 0: %v, outcome %d; want 1", v, out)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if end := c.roomEnd.Load(); end != 2 {
		t.Fatalf("Close read room %d, want 2 (R + capacity)", end)
	}
	if st := seg.cell(1).state.Load(); !isWaiter(st) {
		t.Errorf("Close's walk moved the in-window parked sender's cell to %s", stateName(st))
	}
	c.expandFor(r, seg, true) // the receive goes on: its expansion claims the parked sender
	if err := <-sent; err != nil {
		t.Errorf("the Send parked inside the window at Close = %v, want nil", err)
	}
	if v, err := c.TryRecv(); err != nil || v != 2 {
		t.Errorf("TryRecv = %v, %v; want 2", v, err)
	}
	if v, err := c.TryRecv(); err != ErrClosed {
		t.Errorf("TryRecv = %v, %v; want ErrClosed", v, err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestCtxReceiveKeepsTicketedSender replays a parked RecvContext whose
// context fires while the sender of its cell holds its ticket (capacity 1).
// A TrySend(7) finds room, takes ticket 0 and pauses before its cell; a
// TrySend(8) then says ErrFull, counting 7 as buffered; the receive takes
// ticket 0 and parks in the empty cell 0 (its expansion makes cell 1 room),
// and a TrySend(9) that starts after the ErrFull buffers in cell 1. If the
// receive withdrew when its context fired, TrySend(7) would meet a cell
// given up, take ticket 2 and find the buffer full: 7 never sent, and the
// ErrFull given on an empty channel. By the ticketed-sender rule (await) it
// stays, and gets 7.
func TestCtxReceiveKeepsTicketedSender(t *testing.T) {
	c := newCells[int](1)
	if v := c.fullCheck(c.s.Load()); v != roomYes { // TrySend(7)'s fast check
		t.Fatalf("empty channel: verdict %d, want room", v)
	}
	seg := c.sendSeg.Load()
	s := c.s.Add(1) - 1 // TrySend(7): ticket 0, paused
	if err := c.TrySend(8); err != ErrFull {
		t.Fatalf("TrySend(8) with 7's ticket taken = %v, want ErrFull", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		v   int
		err error
	}
	got := make(chan result, 1)
	go func() {
		v, err := c.RecvContext(ctx) // ticket 0: parks in cell 0
		got <- result{v, err}
	}()
	cl := seg.cell(int(s & segMask))
	for !isWaiter(cl.state.Load()) {
		runtime.Gosched() // until the receive has registered
	}
	w := cl.state.Load()
	if err := c.TrySend(9); err != nil { // ticket 1: room, once the receive's expansion ran or in R + capacity
		t.Fatalf("TrySend(9) = %v", err)
	}

	cancel()
	yieldWhile(func() bool { return cl.state.Load() == w })
	if st := cl.state.Load(); st != w {
		t.Errorf("the receive whose sender holds its ticket withdrew (cell now %s) when its context fired", stateName(st))
	}
	if out := c.sendStep(seg, s, 7, modeTry); out != outOK { // TrySend(7) resumes
		t.Errorf("TrySend(7), counted by a full verdict, outcome %d, want outOK", out)
	}
	if r := <-got; r.err != nil || r.v != 7 {
		t.Errorf("RecvContext = %v, %v; want 7", r.v, r.err)
	}
	if v, err := c.TryRecv(); err != nil || v != 9 {
		t.Errorf("TryRecv = %v, %v; want 9", v, err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestSenderPastRoomRestartsParkedReceiver replays a rendezvous send whose
// ticket predates Close but which had no receiver at Close (the room Close
// read is R = 0), and a receive that starts after Close, takes ticket 0
// (below closeAt) and parks in that send's cell. The send may not deliver
// after Close (mayDeliver): it fails the receiver (failReceiver), which
// must be woken to take a new ticket, at which it finds the channel closed.
func TestSenderPastRoomRestartsParkedReceiver(t *testing.T) {
	c := newCells[int](0)
	seg := c.sendSeg.Load()
	s := c.s.Add(1) - 1 // a Send takes ticket 0 and pauses before its cell
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if end, ca := c.roomEnd.Load(), c.closeAt.Load(); end != 0 || ca != 1 {
		t.Fatalf("Close read room %d and closeAt %d, want 0 and 1", end, ca)
	}
	// A receive after Close takes ticket 0 and parks in cell 0.
	r := c.r.Add(1) - 1
	p := party[int]{m: modePark}
	cl := seg.cell(int(r & segMask))
	if !c.register(cl, nil, opRecv, &p) {
		t.Fatal("the receive could not register in its empty cell")
	}
	if c.doomed(r, p.own) {
		t.Fatal("a receive below closeAt is doomed")
	}
	// The send resumes: it may not deliver, and fails the receiver.
	if out := c.sendStep(seg, s, 20, modePark); out == outOK {
		t.Fatal("a send with no room at Close delivered after it")
	}
	if p.own.sleep.state.Load() != sleepWoken { // the owner has not blocked: woken without a token
		t.Fatal("the receiver whose sender gave up after Close was not woken: it would park forever")
	}
	if v, out := c.park(nil, seg, int(r&segMask), &p); out != outRestart {
		t.Errorf("the failed receiver's outcome = %d (value %v), want outRestart (%d)", out, v, outRestart)
	}
	if v, ok := c.Recv(); ok { // the receive takes a new ticket: past closeAt
		t.Errorf("Recv after Close = %v, %v; want the channel closed", v, ok)
	}
	if err := CheckInvariants(c); err != nil {
		t.Error(err)
	}
}

// TestTicketedSenderWaitEndsAtCloseAt replays a receive that waits for the
// sender of its cell (the ticketed-sender rule) while a Close is between
// its OR and its store of closeAt: the ticket it waits on was taken after
// the OR, by a send that fails without writing its cell. (A TryRecv no
// longer takes such a ticket: its claim waits for closeAt and stays below
// it. A receive that takes its ticket with a fetch-and-add and waits, such
// as a select's receive case on a buffered or unbounded channel, still
// can; the step is run here in Try mode, which waits the same way.) Once Close stores
// closeAt, that ticket is at or past it, and the wait must end
// (awaitSender): the receive finds the channel closed. (On code that keeps
// waiting this test hangs.)
func TestTicketedSenderWaitEndsAtCloseAt(t *testing.T) {
	for _, k := range []int{0, 1, Unbounded} {
		c := newCells[int](k)
		end := openMark
		if k >= 0 {
			end = c.beginClose()
		}
		sc := c.s.Or(closedBit) & counterMask   // Close's OR; roomEnd and closeAt not stored yet
		if err := c.Send(1); err != ErrClosed { // ticket 0, after the OR
			t.Fatalf("cap %d: Send after Close's OR = %v, want ErrClosed", k, err)
		}
		// A TryRecv whose check of the counters came before the OR takes
		// ticket 0: S = 1 says its sender holds its ticket, and closeAt is
		// not stored, so it waits for that sender.
		seg := c.recvSeg.Load()
		r := c.r.Add(1) - 1
		out := make(chan outcome, 1)
		go func() {
			_, o := c.recvCell(seg, int(r&segMask), r, &party[int]{m: modeTry})
			out <- o
		}()
		for i := 0; i < 100; i++ {
			runtime.Gosched() // a chance for the receive to start waiting
		}
		if k >= 0 {
			c.roomEnd.Store(end) // Close goes on
		}
		c.closeAt.Store(sc)
		if o := <-out; o != outClosed {
			t.Errorf("cap %d: the receive's outcome = %d, want outClosed (%d)", k, o, outClosed)
		}
		if err := CheckInvariants(c); err != nil {
			t.Errorf("cap %d: %v", k, err)
		}
	}
}

// TestSecondLookFindsRoom replays a plain sender on a full buffer (capacity
// 1) that found no room for its ticket 1, and a receive that takes the value
// in cell 0 and runs its implicit expansion before the sender registers in
// cell 1: the expansion finds cell 1 empty and leaves it. The sender's
// second look, after its registration, must find the room and deliver (the
// second look, sendCell); otherwise it would stay parked with room.
func TestSecondLookFindsRoom(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	seg := c.sendSeg.Load()
	s := c.s.Add(1) - 1 // the sender's ticket
	if c.roomFor(s) {
		t.Fatalf("ticket %d has room in a full buffer", s)
	}
	// The receive of ticket 0, then its expansion of cell 1.
	r := c.r.Add(1) - 1
	if v, out := c.recvCell(seg, int(r), r, &party[int]{m: modeTry}); out != outOK || v != 1 {
		t.Fatalf("receive of cell 0: %v, outcome %d; want 1", v, out)
	}
	c.expandFor(r, seg, true)
	cl := seg.cell(int(s))
	if st := cl.state.Load(); st != nil {
		t.Fatalf("the expansion moved the empty cell 1 to %s", stateName(st))
	}
	// Now the sender registers, as sendCell does, and looks again.
	p := &party[int]{}
	cl.elem = 2
	if !c.register(cl, nil, opSend, p) {
		t.Fatal("registration in the empty cell 1 failed")
	}
	if !c.secondLook(seg, int(s), s, p) {
		t.Fatalf("the second look missed the room the receive made: cell 1 is %s", stateName(cl.state.Load()))
	}
	if v, err := c.TryRecv(); err != nil || v != 2 {
		t.Fatalf("TryRecv after the second look: %v, %v; want 2", v, err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Fatal(err)
	}
}

// TestImplicitExpansionClaimsParkedSender is the other order: the sender of
// cell segSize registers on a full buffer of capacity segSize before the
// receive of ticket 0 runs its expansion, which must find the registration
// in the next segment (past the bufSeg root) and move its value into the
// buffer.
func TestImplicitExpansionClaimsParkedSender(t *testing.T) {
	const capacity = segSize
	c := newCells[int](capacity)
	for v := range capacity {
		if err := c.TrySend(v); err != nil {
			t.Fatal(err)
		}
	}
	sent := make(chan error, 1)
	go func() { sent <- c.Send(capacity) }() // ticket segSize: parks in the next segment's first cell
	cl := c.findCell(capacity)
	for cl == nil {
		runtime.Gosched() // until the sender has linked its segment
		cl = c.findCell(capacity)
	}
	awaitBlocked(cl) // until the sender has parked
	if v, err := c.TryRecv(); err != nil || v != 0 {
		t.Fatalf("TryRecv: %v, %v; want 0", v, err)
	}
	if st := cl.state.Load(); st != stBuffered {
		t.Fatalf("after the receive's expansion cell %d is %s, want buffered", capacity, stateName(st))
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= capacity; want++ {
		if v, err := c.TryRecv(); err != nil || v != want {
			t.Fatalf("TryRecv: %v, %v; want %d", v, err, want)
		}
	}
	if err := CheckInvariants(c); err != nil {
		t.Fatal(err)
	}
}

// TestSecondLookAfterCloseFails replays a plain sender registered on a full
// buffer (capacity 1) whose second look comes after Close has taken effect
// and after a receive, draining the channel, has made room: the room came
// after Close, and the channel was full when Close read its room, so the
// send must fail as closed (the second look claims its registration as an
// expansion would, through Close's bound, claimSender), not deliver a value
// after Close. Close's walk, which would fail the registration itself, has
// not reached the cell yet (the test runs Close up to its walk by hand).
func TestSecondLookAfterCloseFails(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	seg := c.sendSeg.Load()
	s := c.s.Add(1) - 1 // the sender's ticket, 1: no room
	if c.roomFor(s) {
		t.Fatalf("ticket %d has room in a full buffer", s)
	}
	cl := seg.cell(int(s))
	cl.elem = 2
	p := &party[int]{}
	if !c.register(cl, nil, opSend, p) {
		t.Fatal("registration in the empty cell 1 failed")
	}

	// Close, up to its walk (finishClose).
	end := c.beginClose()
	old := c.s.Or(closedBit)
	c.roomEnd.Store(end)
	c.closeAt.Store(old & counterMask)

	// A receive drains cell 0 (ticket 0 < closeAt) and, before its
	// expansion, the sender looks again.
	r := c.r.Add(1) - 1
	if v, out := c.recvCell(seg, int(r), r, &party[int]{m: modeTry}); out != outOK || v != 1 {
		t.Fatalf("receive of cell 0: %v, outcome %d; want 1", v, out)
	}
	if c.secondLook(seg, int(s), s, p) {
		t.Fatal("the second look delivered a value after Close into a buffer that was full when Close read its room")
	}
	if st := cl.state.Load(); st != stCancelledSend {
		t.Fatalf("cell 1 is %s after the second look, want cancelledSend", stateName(st))
	}
	if out := c.await(nil, seg, int(s), p.own, true); out != outClosed {
		t.Fatalf("the sender's outcome is %d, want outClosed", out)
	}
	putWaiter(p.own, p.pooled, &sendWaiters)
	if _, err := c.TryRecv(); err != ErrClosed {
		t.Fatalf("TryRecv after the failed send: %v, want ErrClosed", err)
	}
}
