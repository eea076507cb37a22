package chans

import (
	"context"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalable-go/chans/internal/sched"
)

// Segment reuse (segment.go, "Reuse"): rendezvous and unbounded channels on
// cells retire the segments every party is done with and publish them again,
// so steady traffic allocates nothing; the first removal ends it.

// mallocs returns the number of heap objects allocated so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// TestReuseSteadyUnbounded sends and receives 64 segments' worth of values
// from one goroutine through an unbounded channel on cells and checks that
// it allocated fewer than one object per eight segments: without reuse it
// allocates a segment per segSize values. (Broken once by taking the
// consumed mark out of recvOp's fast path: 64 objects.)
func TestReuseSteadyUnbounded(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	c := newChan[int](Unbounded, false, 2)
	for i := 0; i < 4*segSize; i++ { // warm up: the list reaches its steady length
		c.Send(i)
		c.Recv()
	}
	const n = 64 * segSize
	before := mallocs()
	for i := 0; i < n; i++ {
		c.Send(i)
		if v, ok := c.Recv(); !ok || v != i {
			t.Fatalf("Recv = %d, %v; want %d, true", v, ok, i)
		}
	}
	if got := mallocs() - before; got >= n/segSize/8 {
		t.Fatalf("%d values through an unbounded channel allocated %d objects; want fewer than %d (segments are reused)", n, got, n/segSize/8)
	}
	if c.reuseOff.Load() {
		t.Fatal("reuse ended on a channel that never removed a segment")
	}
}

// TestReuseSteadyRendezvous is TestReuseSteadyUnbounded for a rendezvous
// channel, a sender goroutine handing values to this one, with or without a
// value buffered in the cell (the receiver's mark comes after collect when
// it parked, after recvCell when it did not). (Broken once by taking the
// consumed mark out of collect: 74 objects.)
func TestReuseSteadyRendezvous(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	c := newChan[int](0, false, 2)
	const warm, n = 4 * segSize, 64 * segSize
	start := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < warm; i++ {
			c.Send(i)
		}
		<-start
		for i := 0; i < n; i++ {
			c.Send(i)
		}
	}()
	for i := 0; i < warm; i++ {
		c.Recv()
	}
	before := mallocs()
	close(start)
	for i := 0; i < n; i++ {
		if v, ok := c.Recv(); !ok || v != i {
			t.Fatalf("Recv = %d, %v; want %d, true", v, ok, i)
		}
	}
	got := mallocs() - before
	<-done
	if got >= n/segSize/4 {
		t.Fatalf("%d values through a rendezvous channel allocated %d objects; want fewer than %d (segments are reused)", n, got, n/segSize/4)
	}
}

// TestReuseEndsAtRemoval cancels receives on an idle rendezvous channel
// until a segment is removed, checks that reuse has ended for good, and
// that values still pass.
func TestReuseEndsAtRemoval(t *testing.T) {
	c := newChan[int](0, false, 2)
	GiveUpRecvCells(c, 3*segSize) // receives whose contexts fired as they registered
	if !c.reuseOff.Load() {
		t.Fatal("segments were removed, but reuse is still on")
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2*segSize; i++ {
			c.Send(i)
		}
	}()
	for i := 0; i < 2*segSize; i++ {
		if v, ok := c.Recv(); !ok || v != i {
			t.Fatalf("Recv after the removals = %d, %v; want %d, true", v, ok, i)
		}
	}
	<-done
}

// TestCloseWakesParkedAsSegmentsRetire closes rendezvous channels on cells
// while a hundred receivers are parked and segments are being retired, and
// checks that every receiver returns. Close's walk starts at the oldest
// segment not retired, which may be retired and cleared under it; it once
// took the cleared segment's nil next pointer for the end of the list and
// left the receivers parked (found by BenchmarkBar's rendezvous rows with
// 1000 goroutines; this test, broken that way, hangs within seconds in the
// chans_perturb build). A hang is caught by go test's -timeout.
func TestCloseWakesParkedAsSegmentsRetire(t *testing.T) {
	rounds := 400
	if testing.Short() || raceOn {
		rounds = 100
	}
	const g = 100
	for round := 0; round < rounds; round++ {
		c := newChan[int](0, false, 2)
		n := []int{1, 3 * segSize, 30 * segSize, 30}[round%4] / g
		var prod, cons sync.WaitGroup
		for range g {
			prod.Add(1)
			go func() {
				defer prod.Done()
				for v := 0; v <= n; v++ {
					c.Send(v)
				}
			}()
			cons.Add(1)
			go func() {
				defer cons.Done()
				for {
					if _, ok := c.Recv(); !ok {
						return
					}
				}
			}()
		}
		prod.Wait()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		cons.Wait()
	}
}

// TestReuseCursorSegAfterReuse stops a walker in cursorSeg after it has
// read the cursor's segment and that segment's id, and there retires the
// segment, moves the cursor on and publishes the segment again at the
// tail, with a larger id. The walker must come back with the cursor's
// segment, not with the reused one under its new id: taking that id for
// the cursor's would tell the walker that every segment before it had
// been given up, and its counter would be raised past cells that still
// hold values (found as lost values by TestBatchCloseRace at GOMAXPROCS 4;
// without the second look at the cursor this test fails every time).
// It needs the chans_perturb build, whose sched.Point can run a hook.
func TestReuseCursorSegAfterReuse(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the chans_perturb build (sched.SetHook)")
	}
	c := newChan[int](Unbounded, false, 2)
	for i := 0; i < 2*segSize; i++ {
		c.Send(i)
	}
	for i := 0; i < segSize-1; i++ {
		c.Recv() // the first segment keeps one value: the cursor stays on it
	}
	first := c.cursor.Load()
	if first.id.Load() != 0 {
		t.Fatalf("cursor at segment %d before the walk, want 0", first.id.Load())
	}
	var armed atomic.Bool
	armed.Store(true)
	sched.SetHook(func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		// The walker has read the cursor and its id. Receive the rest
		// of the first segment and the first value of the second, which
		// moves the receive root on and retires the first segment, then
		// send a segment's worth, which grows the list with it.
		c.Recv()
		c.Recv()
		for i := 0; i < segSize; i++ {
			c.Send(i)
		}
	})
	x, xid := c.cursorSeg()
	sched.SetHook(nil)
	if armed.Load() {
		t.Fatal("the hook did not run: cursorSeg has no scheduling point between its reads")
	}
	if first.id.Load() <= 1 {
		t.Fatalf("the first segment was not reused (its id is %d): the test did not reach its case", first.id.Load())
	}
	if cur := c.cursor.Load(); x != cur || xid != cur.id.Load() || xid != 1 {
		t.Fatalf("cursorSeg = segment with id %d (the cursor's: %v); the cursor names segment %d", xid, x == cur, cur.id.Load())
	}
}

// TestReuseSteadyBuffered is TestReuseSteadyUnbounded for a buffered channel
// on cells: values sent and received one at a time by one goroutine, and in
// runs that fill the buffer (up to 64 values) and empty it. Each receive
// marks its cell done with after its buffer expansion. (Broken once by
// leaving the buffered channels out of reclaim: 64 objects.) The segments a
// run frees wait on the spare list for the next run's grows: in its slots,
// and in its overflow stack where the run spans more segments than the
// slots hold (with two-cell segments, runs of 64 allocated 59 objects before
// the list had the overflow).
//
// With hole set, the same after the channel's first hole: a send parked on
// the full buffer is cancelled, which switches the channel to explicit
// expansions (holesOn). Segments are still reused after that. (Before
// explicit expansions held the segment they expand in, the switch ended
// reuse for good, and every later message cost 19 bytes of segment on
// 256-cell segments: "runs of 1 after a hole: 16384 values allocated 64
// objects".)
func TestReuseSteadyBuffered(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // as in TestReuseAcrossStalls
	for _, hole := range []bool{false, true} {
		for _, run := range []int{1, 64} {
			c := newCells[int](64)
			recv := func(want int) {
				if v, ok := c.Recv(); !ok || v != want {
					t.Fatalf("Recv = %d, %v; want %d, true", v, ok, want)
				}
			}
			what := "without a hole"
			if hole {
				what = "after a hole"
				for i := 0; i < 64; i++ {
					c.Send(i)
				}
				cancelSend(t, c, -1) // ticket 64: the channel's first hole
				if c.holeFrom.Load() == noHoles {
					t.Fatal("a cancelled send left a hole, but the channel did not switch to explicit expansions")
				}
				for i := 0; i < 64; i++ {
					recv(i)
				}
			}
			for i := 0; i < 4*segSize; i++ { // warm up: the list reaches its steady length
				c.Send(i)
				recv(i)
			}
			for i := 0; i < run; i++ { // and the spares, the depth of a run
				c.Send(i)
			}
			for i := 0; i < run; i++ {
				recv(i)
			}
			n := max(64*segSize, 16*run)
			before := mallocs()
			for i := 0; i < n; i += run {
				for j := 0; j < run; j++ {
					c.Send(i + j)
				}
				for j := 0; j < run; j++ {
					recv(i + j)
				}
			}
			if got := mallocs() - before; got >= uint64(n/segSize/8) {
				t.Fatalf("runs of %d %s: %d values allocated %d objects; want fewer than %d (segments are reused)", run, what, n, got, n/segSize/8)
			}
			if c.reuseOff.Load() {
				t.Fatalf("runs of %d %s: reuse ended", run, what)
			}
			if err := CheckInvariants(c); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestReuseExplicitExpansionHoldsItsSegment stages an explicit expansion
// (after the first hole) that has found the segment of its cell b and not
// yet looked at the cell, while b's sender finds room below R + capacity,
// b's receiver takes the value, and traffic retires the segment and
// publishes it again as the tail. The expansion must leave the cell of the
// segment's new life alone: marked inBuffer, it would let the send of a
// ticket past the buffer's end store a value without room. The expansion
// stands for one a receive owes after it gave its cell up (a hole's
// receiver), whose own cell, final, keeps no segment from retiring; the
// test calls it directly, and takes its ticket back at the end. (Broken
// once, on purpose, by dropping the hold in expandAt: "cell 1 of the
// segment's new life: inBuffer"; mutant reuse-explicit-no-hold.)
func TestReuseExplicitExpansionHoldsItsSegment(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the chans_perturb build (sched.SetHook)")
	}
	c := newCells[int](1)
	c.holesOn() // explicit expansions from R = 0 on: B = 1
	c.Send(0)   // ticket 0, below B: buffered
	// Ticket 1: no room, it parks.
	_, sent := parkSend(t, c, context.Background(), 1)
	seg0 := c.cursor.Load() // segment 0, the only one
	var armed, reused atomic.Bool
	armed.Store(true)
	t.Cleanup(func() { sched.SetHook(nil) }) // also if the hook fails the test: perturbation resumes
	sched.SetHook(func() {
		if !inFunc("expandAt") || !armed.CompareAndSwap(true, false) {
			return
		}
		// The expansion holds ticket 1 and has found segment 0. Ticket
		// 1's receiver takes the parked send's value (R + capacity now
		// covers it), and one value at a time moves every root on until
		// segment 0 is published again, as the tail, with nothing sent
		// into its cell 1 yet.
		wantRecv(t, c, 0)
		wantRecv(t, c, 1)
		if err := <-sent; err != nil {
			t.Errorf("the send of ticket 1: %v", err)
		}
		for i := 2; i < 2+8*segSize; i++ {
			c.Send(i)
			if id := seg0.id.Load(); id != 0 && id != retiredID {
				reused.Store(true)
				wantRecv(t, c, i)
				return
			}
			wantRecv(t, c, i)
		}
	})
	c.expand(noPin)
	sched.SetHook(nil)
	if armed.Load() {
		t.Fatal("the hook did not run: expandAt has no scheduling point before it looks at the cell")
	}
	if !reused.Load() {
		t.Fatal("segment 0 was not published again: the test did not reach its case")
	}
	if st := seg0.cell(1).state.Load(); st != nil {
		t.Fatalf("cell 1 of the segment's new life: %s; want nil: the expansion of ticket 1 acted on it", stateName(st))
	}
	// The staged expansion is one no receive owes: take its ticket back out
	// of B and settled, and the counts agree with the cells again.
	c.b.Add(^uint64(0))
	c.settled.Add(^uint64(0))
	if err := CheckInvariants(c); err != nil {
		t.Fatal(err)
	}
}

// TestReuseRegistrationDoesNotPin stages the expansion a select's receive
// case owes once it has registered, on a buffered channel after its first
// hole (explicit expansions), while the cell's sender finds the select
// still registering and cancels the registration (a select must not be
// committed by others while it registers: the case registers again). The
// receive's cell is then final, and no longer keeps later segments from
// retiring: the expansion must hold the segment of the cell it expands.
// Here that cell, b, is in the next segment; its sender arrives while the
// expansion is stopped after its look at the cell, finds room, its value
// is received, and traffic goes on until the segment could be published
// again at the tail. An expansion that took the registration for a pin
// acts on the cell of the segment's new life: inBuffer there would let a
// send past the buffer's end store a value without room. (Mutant
// reuse-registration-pins: "cell 1 of segment 1's new life: inBuffer".)
func TestReuseRegistrationDoesNotPin(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the chans_perturb build (sched.SetHook)")
	}
	c := newCells[int](2)
	d := newCells[int](1) // the select's other case
	c.holesOn()           // explicit expansions from R = 0 on: B = 2
	k := uint64(segSize - 1)
	for i := range int(k) { // the select's ticket will be k, the last cell of segment 0
		c.Send(i)
		wantRecv(t, c, i)
	}

	// stage 1: the select's expansion has taken its ticket b = k + 2 (cell
	// 1 of segment 1) from B. stage 2: it has loaded cell b's state.
	var stage atomic.Int32
	paused, resume := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { sched.SetHook(nil) })
	sched.SetHook(func() {
		switch st := stage.Load(); {
		case st == 1 && inFunc("expand") && stage.CompareAndSwap(1, 0):
		case st == 2 && inFunc("expandCell") && stage.CompareAndSwap(2, 0):
		default:
			return
		}
		paused <- struct{}{}
		<-resume
	})
	stage.Store(1)
	chose := make(chan int, 1)
	go func() { chose <- Select(OnRecv(c, nil), OnRecv(d, nil)) }()
	<-paused
	if r := c.r.Load(); r != k+1 {
		t.Fatalf("R = %d with the select stopped in its expansion; want %d", r, k+1)
	}

	// The senders of tickets k, k+1 and b = k+2 take their tickets. That of
	// k finds the select registering in its cell, and cancels the
	// registration; that of k+1 stores its value; that of b waits.
	if s := c.s.Add(3) - 3; s != k {
		t.Fatalf("send ticket %d; want %d", s, k)
	}
	seg0 := c.cellSeg(&c.sendSeg, c.sendSeg.Load(), k)
	if out := c.sendStep(seg0, k, -1, modePark); out != outRestart {
		t.Fatalf("the send of ticket %d into the registering select's cell: outcome %d; want outRestart", k, out)
	}
	if st := seg0.cell(int(k & segMask)).state.Load(); st != stCancelledRecv {
		t.Fatalf("cell %d after its sender met the registering select: %s; want cancelledRecv", k, stateName(st))
	}
	seg1 := c.cellSeg(&c.sendSeg, seg0, k+1)
	if out := c.sendStep(seg1, k+1, int(k+1), modePark); out != outOK {
		t.Fatalf("the send of ticket %d: outcome %d; want outOK", k+1, out)
	}
	stage.Store(2)
	resume <- struct{}{}
	<-paused

	// Cell b's sender finds room below B, both values are received, and
	// traffic goes on until segment 1 is published again, with nothing
	// sent into its cell 1 yet, or for eight segments' worth if it is held.
	b := k + 2
	if out := c.sendStep(seg1, b, int(b), modePark); out != outOK {
		t.Fatalf("the send of ticket %d: outcome %d; want outOK", b, out)
	}
	wantRecv(t, c, int(k+1))
	wantRecv(t, c, int(b))
	reused := false
	for i := 0; i < 8*segSize && !reused; i++ {
		c.Send(i)
		id := seg1.id.Load()
		reused = id != 1 && id != retiredID
		wantRecv(t, c, i)
	}
	if err := d.Send(1); err != nil { // the select takes this once it looks again
		t.Fatal(err)
	}
	resume <- struct{}{}
	if j := <-chose; j != 1 {
		t.Fatalf("the select chose case %d; want 1 (c is empty)", j)
	}
	if st := seg1.cell(int(b & segMask)).state.Load(); reused && st != nil {
		t.Fatalf("cell %d of segment 1's new life: %s; want nil: the expansion of ticket %d acted on it", b&segMask, stateName(st), b)
	}
	if err := CheckInvariants(c); err != nil {
		t.Fatal(err)
	}
}

// inFunc reports whether a function whose name ends in "."+name is on the
// caller's stack, a few frames up (a sched hook's filter).
func inFunc(name string) bool {
	pcs := make([]uintptr, 8)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, "."+name) {
			return true
		}
		if !more {
			return false
		}
	}
}

// TestRetireWaitsForHoleReceiver stages, on a buffered channel on cells, a
// receive that has taken the ticket of a hole (a cell whose sender gave up,
// already made good by an expansion) but has not reached the cell yet,
// while traffic moves every root past its segment. Retirement must leave
// that segment be until the receiver has met the hole: a receive that
// found its segment retired would take a new ticket without the settle it
// owes, and full verdicts would then wait for it for ever. (Broken once by
// counting holePaid as final, as the tried reuse for buffered channels
// did: "the segment of receive ticket 1 was retired".)
func TestRetireWaitsForHoleReceiver(t *testing.T) {
	c := newCells[int](1)
	c.Send(0)
	cancelSend(t, c, -1) // ticket 1: its send gives its cell up
	wantRecv(t, c, 0)    // its expansion meets the hole at 1 and pays it: holePaid
	if st := c.recvSeg.Load().cell(1).state.Load(); st != stHolePaid {
		t.Fatalf("cell 1 after the expansion: %p; want holePaid", st)
	}
	start := c.recvSeg.Load()
	tk := c.r.Add(1) - 1 // the hole's receiver takes its ticket, and stalls
	if tk != 1 {
		t.Fatalf("receive ticket %d; want 1", tk)
	}
	for i := 1; i <= 3*segSize; i++ { // every root moves on, grows and receives reclaim
		c.Send(i)
		wantRecv(t, c, i)
	}
	if c.cursor.Load().id.Load() != 0 {
		t.Fatalf("cursor at segment %d; want 0: the hole's receiver has not come", c.cursor.Load().id.Load())
	}
	seg := c.cellSeg(&c.recvSeg, start, tk)
	if seg == nil {
		t.Fatal("the segment of receive ticket 1 was retired before its receiver met its hole")
	}
	if _, out := c.recvCell(seg, int(tk&segMask), tk, &party[int]{m: modeTry}); out != outRestart {
		t.Fatalf("the hole's receiver: outcome %d; want outRestart (an expansion paid the hole)", out)
	}
	c.settle()
	if st := seg.cell(int(tk & segMask)).state.Load(); st != stHoleSeen {
		t.Fatalf("the hole after its receiver: %p; want holeSeen", st)
	}
	if err := CheckInvariants(c); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2*segSize; i++ { // the cursor moves on now
		c.Send(i)
		wantRecv(t, c, i)
	}
	if c.cursor.Load().id.Load() == 0 {
		t.Fatal("segment 0 still not retired after the hole's receiver came")
	}
}

// TestHoldRefusesSegmentWithoutID checks that a segment read between its
// publication and its id (a reused or spare segment, whose grow stores the
// id after its compare-and-swap) cannot be held under retiredID: Len's walk
// took such a hold and, reading the id as past every ticket, counted none
// of the segment's values. (Found by the Porcupine checks of Len on
// buffered channels that reuse segments.)
func TestHoldRefusesSegmentWithoutID(t *testing.T) {
	c := newChan[int](4, false, 2)
	s := c.newSegment(0, nil, 0)
	s.id.Store(retiredID)
	if s.hold(retiredID) {
		t.Fatal("hold(retiredID) succeeded on a segment with no id yet")
	}
	s.id.Store(5)
	if !s.hold(5) {
		t.Fatal("hold(5) failed on a live segment with id 5")
	}
	s.release()
}

// TestReuseAcrossStalls stalls a receive between its ticket and its step
// while 32 segments of traffic pass an unbounded channel on cells, twice.
// Retirement goes in list order, so the stalled receive holds back every
// segment after its own, and the first stall allocates what the traffic
// needs; once it moves on, those segments retire together, more than the
// spare slots hold, and the second stall must find them kept (the spare
// list's overflow stack) instead of allocating again. (Broken once by
// dropping what the slots do not hold, as the spare list did before it had
// the overflow: 28 objects in the second stall.)
func TestReuseAcrossStalls(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	// The overflow stack goes at the next collection (the channel holds it
	// weakly); a collection between the stalls would leave the second one
	// nothing to reuse, so none runs during this test.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const traffic = 32 * segSize
	c := newChan[int](Unbounded, false, 2)
	stall := func() uint64 {
		c.Send(-1)
		start := c.recvSeg.Load()
		tk := c.r.Add(1) - 1 // the stalled receive's ticket
		before := mallocs()
		for i := 0; i < traffic; i++ {
			c.Send(i)
			if v, ok := c.Recv(); !ok || v != i {
				t.Fatalf("Recv = %d, %v; want %d, true", v, ok, i)
			}
		}
		got := mallocs() - before
		seg := c.cellSeg(&c.recvSeg, start, tk)
		if seg == nil {
			t.Fatal("the stalled receive's segment was retired under it")
		}
		i := int(tk & segMask)
		if v, out := c.recvCell(seg, i, tk, &party[int]{m: modeTry}); out != outOK || v != -1 {
			t.Fatalf("the stalled receive: %d, outcome %d; want -1, outOK", v, out)
		}
		c.doneWith(seg.cell(i))
		// Traffic until the cursor has caught up: the segments the stall
		// held back retire, a few per grow.
		for i := 0; c.cursor.Load().id.Load()+2 < c.recvSeg.Load().id.Load(); i++ {
			if i == traffic {
				t.Fatalf("cursor at segment %d, receives at %d: the held-back segments do not retire", c.cursor.Load().id.Load(), c.recvSeg.Load().id.Load())
			}
			c.Send(i)
			c.Recv()
		}
		return got
	}
	first := stall()
	if first < traffic/segSize/2 {
		t.Fatalf("the first stall allocated %d objects; want about %d (segments held back): the stall did not hold retirement back", first, traffic/segSize)
	}
	if second := stall(); second >= traffic/segSize/8 {
		t.Fatalf("the second stall allocated %d objects (the first %d); want fewer than %d: the segments the first stall held back were not kept", second, first, traffic/segSize/8)
	}
}

// TestSpareOverflowKeepsNothingAlive checks that a channel whose overflow
// stack of spares was used is freed, with the values still buffered in it,
// by the first collection after it is dropped: the channel holds the stack
// only through a weak pointer, and nothing outside the channel holds
// either. (Broken once by keeping the overflow in a sync.Pool, which the
// runtime lists on its first Put: the value outlived that collection.)
func TestSpareOverflowKeepsNothingAlive(t *testing.T) {
	done := abandonAfterOverflow(t)
	runtime.GC()
	select {
	case <-done:
	case <-time.After(10 * time.Second): // a bound on failure: the cleanup runs soon after the collection that freed the value
		t.Fatal("a value buffered in an abandoned channel whose spares overflowed outlived the first collection after it was dropped")
	}
}

// abandonAfterOverflow makes an unbounded channel on cells, runs a burst of
// 32 segments through it (its receives retire them several at a time, more
// than the spare slots hold), leaves one value buffered in it and drops it.
// It returns a channel closed once that value has been found unreachable.
//
//go:noinline
func abandonAfterOverflow(t *testing.T) <-chan struct{} {
	c := newChan[*[1 << 10]byte](Unbounded, false, 2)
	for range 32 * segSize {
		c.Send(nil)
	}
	for range 32 * segSize {
		c.Recv()
	}
	if !c.spares.more.Load() {
		t.Fatal("the burst left nothing on the overflow stack: the test does not exercise it")
	}
	v := new([1 << 10]byte)
	done := make(chan struct{})
	runtime.AddCleanup(v, func(done chan struct{}) { close(done) }, done)
	c.Send(v)
	return done
}
