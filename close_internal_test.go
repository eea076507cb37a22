package chans

import (
	"runtime"
	"slices"
	"testing"
)

// TestLosingCloseKeepsRoomBound replays, step by step, a schedule in which a
// second Close loses the race to the first but records its bound on the room
// after the winner took effect and a receive made room (found in review).
// The send whose ticket predates Close found the channel full at Close, so
// it must fail after Close; a losing Close that raised the bound let it
// deliver into the closed channel.
func TestLosingCloseKeepsRoomBound(t *testing.T) {
	for _, k := range []int{0, 1} {
		c := newCells[int](k)
		if k > 0 {
			if err := c.TrySend(10); err != nil { // buffer full
				t.Fatal(err)
			}
		}
		// Y: a Send takes its ticket and pauses right after the fetch-and-add.
		yseg := c.sendSeg.Load()
		yt := c.s.Add(1) - 1
		// L: a second Close sees S open and pauses before recording the room.
		if c.s.Load()&closedBit != 0 {
			t.Fatal("closed too early")
		}
		// W: the first Close wins.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// X: a receive that starts after Close made room (buffered) or waits
		// in the cell Y will come to (rendezvous).
		recvd := make(chan int, 1)
		if k > 0 {
			if v, ok := c.Recv(); !ok || v != 10 {
				t.Fatalf("cap %d: Recv = %v, %v", k, v, ok)
			}
		} else {
			go func() { v, _ := c.Recv(); recvd <- v }()
			for c.r.Load() == 0 {
				runtime.Gosched() // until X has its ticket: it parks in cell 0 or, seeing
				// Close, returns; either way it cannot take Y's value legally
			}
		}
		// L resumes: it reads the room it sees now, then its OR fails.
		if err := c.finishClose(c.beginClose()); err != ErrClosed {
			t.Fatalf("the losing Close returned %v, want ErrClosed", err)
		}
		// Y resumes in its cell.
		seg := c.cellSeg(&c.sendSeg, yseg, yt)
		out := c.sendStep(seg, yt, 20, modePark)
		if out == outOK {
			t.Errorf("cap %d: a send that found the channel full at Close delivered after it", k)
		}
		if k > 0 {
			if v, err := c.TryRecv(); err != ErrClosed {
				t.Errorf("cap %d: TryRecv after Close = %v, %v; want ErrClosed", k, v, err)
			}
		} else if v := <-recvd; v != 0 {
			t.Errorf("cap 0: the receive that began after Close got %v", v)
		}
	}
}

// TestBatchPastCloseRoom replays a send batch that claims its ticket while
// a Close is under way, with room that a receive made after Close read the
// room, and reaches its cell after Close took effect: the ticket is past the
// room Close recorded, so the value must not be delivered (mayDeliver), as
// for a single send (TestLosingCloseKeepsRoomBound), also on the batch's
// inline common case (bufferInto), which must leave a closed channel to
// sendCell.
func TestBatchPastCloseRoom(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(10); err != nil { // buffer full: S = 1
		t.Fatal(err)
	}
	end := c.beginClose() // Close reads the room: R + capacity = 1
	if v, ok := c.Recv(); !ok || v != 10 {
		t.Fatalf("Recv during Close = %v, %v; want 10, true", v, ok)
	}
	// The batch claims ticket 1, which has room now (R = 1).
	seg := c.sendSeg.Load()
	s, k := c.claimSends(1)
	if s != 1 || k != 1 {
		t.Fatalf("claimSends(1) = %d, %d; want ticket 1", s, k)
	}
	if err := c.finishClose(end); err != nil { // Close takes effect
		t.Fatal(err)
	}
	if n := c.deliverBatch(seg, s, k, []int{20}); n != 0 {
		t.Errorf("a batch ticket past the room Close recorded delivered %d value(s) after Close", n)
	}
	if v, err := c.TryRecv(); err != ErrClosed {
		t.Errorf("TryRecv after Close = %v, %v; want ErrClosed", v, err)
	}
}

// TestLenInsideClose replays a Close that has set S's closed bit but not yet
// stored closeAt, with a send that took its ticket after the bit: that send
// fails at once and never writes its cell. A Len that read S in this window
// took the ticket for a sender on its way and waited for its cell forever
// (found by TestLinz under chans_smallseg,chans_perturb with the race
// detector: one Len waited 26 minutes on a capacity-1 channel). Len must
// bound its walk by closeAt. On the old code some rounds hang, and the test
// fails by its timeout; Len runs on its own goroutine so that it can read S
// before the store.
func TestLenInsideClose(t *testing.T) {
	rounds := 2000
	if testing.Short() {
		rounds = 200
	}
	for round := range rounds {
		c := newCells[int](1)
		if round%2 == 1 {
			if err := c.TrySend(7); err != nil { // one value buffered
				t.Fatal(err)
			}
		}
		want := round % 2
		// Close, up to its OR.
		end := c.beginClose()
		sc := c.s.Or(closedBit) & counterMask
		// A send after the OR fails without touching its cell.
		if err := c.Send(1); err != ErrClosed {
			t.Fatalf("round %d: Send after the OR = %v, want ErrClosed", round, err)
		}
		res := make(chan int)
		go func() { res <- c.Len() }()
		runtime.Gosched()
		c.roomEnd.Store(end) // Close goes on
		c.closeAt.Store(sc)
		if n := <-res; n != want {
			t.Fatalf("round %d: Len = %d, want %d", round, n, want)
		}
	}
}

// TestLenCountsSenderBeingClaimed replays a buffer expansion that has
// claimed a parked sender inside the buffer window and holds its cell in
// resuming, on its way to buffered. Len counts such a sender as buffered
// before the claim and after it, so it must count it during the claim too:
// a Len that skipped the resuming cell reported one value fewer than there
// were (found by TestLinz under chans_smallseg,chans_perturb at capacity 3:
// Len → 2 with three values in the channel). Len runs on its own goroutine,
// since it must wait for the claimer; on the old code some rounds return 0.
func TestLenCountsSenderBeingClaimed(t *testing.T) {
	rounds := 500
	if testing.Short() {
		rounds = 50
	}
	for round := range rounds {
		c := newCells[int](1)
		if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
			t.Fatal(err)
		}
		sent := make(chan error)
		go func() { sent <- c.Send(2) }() // ticket 1: parks in cell 1
		seg := c.sendSeg.Load()
		cl := seg.cell(1)
		awaitBlocked(cl) // until the sender has parked
		// A receive takes ticket 0 and the value in cell 0; its expansion
		// (of cell 0 + capacity: no hole has appeared, so it takes no
		// ticket from B) claims the parked sender: wS → resuming.
		c.r.Add(1)
		seg.cell(0).elem = 0
		w := cl.state.Load()
		if !cl.state.CompareAndSwap(w, stResuming) {
			t.Fatal("the parked sender left its cell")
		}
		n := make(chan int)
		go func() { n <- c.Len() }()
		runtime.Gosched()
		// The claim completes: resuming → buffered, the sender wakes.
		cl.state.Store(stBuffered)
		w.wakeUp(resOK)
		if got := <-n; got != 1 {
			t.Fatalf("round %d: Len = %d while the claimed sender's value was the one value in the channel", round, got)
		}
		if err := <-sent; err != nil {
			t.Fatal(err)
		}
		if v, err := c.TryRecv(); err != nil || v != 2 {
			t.Fatalf("TryRecv = %v, %v; want 2", v, err)
		}
	}
}

// TestFullVerdictInsideClose replays a Close that has read the room and not
// yet taken effect while receives make more room (capacity 2). Close reads
// R = 0 and B = 2 and pauses; two receives empty the buffer (R = 2, B = 4); a
// send delivers 10 into cell 2; a TrySend(7) passes its full check, takes
// ticket 3 and pauses before its cell. A full verdict now would count that
// send as buffered (S = B = 4), yet once Close takes effect with the room it
// read (2), the send fails: the verdict would have called a buffer full that
// held one value. A full verdict given while a Close is under way must wait
// for it and report the channel closed. The same holds for a select's send
// case, and for Len (TestLenInsideCloseSkipsDoomedSender). (A TrySend never
// meets a full buffer in its cell: it claims only a ticket with room.)
func TestFullVerdictInsideClose(t *testing.T) {
	c := newCells[int](2)
	for _, v := range []int{1, 2} {
		if err := c.TrySend(v); err != nil { // cells 0 and 1: the buffer is full
			t.Fatal(err)
		}
	}
	end := c.beginClose() // Close reads the room and pauses before its OR
	if end != 2 {
		t.Fatalf("Close read room %d, want 2", end)
	}
	for _, want := range []int{1, 2} {
		if v, err := c.TryRecv(); err != nil || v != want {
			t.Fatalf("TryRecv = %v, %v; want %d", v, err, want)
		}
	}
	if err := c.TrySend(10); err != nil { // cell 2
		t.Fatal(err)
	}
	// TrySend(7): its full check sees room, it claims ticket 3 (which has
	// room) and pauses.
	if v := c.fullCheck(c.s.Load()); v != roomYes {
		t.Fatalf("TrySend(7)'s full check = %d, want room", v)
	}
	seg7 := c.sendSeg.Load()
	t7, k7 := c.claimSends(1)
	if k7 != 1 || t7 != 3 {
		t.Fatalf("TrySend(7) claimed %d tickets from %d, want ticket 3", k7, t7)
	}

	// Every full verdict in this window counts the paused send as buffered.
	verdict := c.fullCheck(c.s.Load())
	_, ready := (&sendCase[int]{c: c}).snapshot(nil)
	res99 := make(chan error, 1)
	go func() { res99 <- c.TrySend(99) }()
	// TrySend(99) finds no room while Close is under way: it may report
	// neither full nor closed before Close takes effect.
	yieldWhile(func() bool { return len(res99) == 0 })
	if len(res99) != 0 {
		t.Errorf("TrySend(99) returned %v before Close took effect", <-res99)
		res99 <- ErrClosed // for the checks below
	}

	if err := c.finishClose(end); err != nil { // Close takes effect
		t.Fatal(err)
	}
	seg := c.cellSeg(&c.sendSeg, seg7, t7) // TrySend(7) resumes, as sendOp goes on after its claim
	out7 := c.sendCell(seg, int(t7&segMask), t7, 7, &party[int]{m: modeTry, room: true})
	err99 := <-res99
	var got []int
	for {
		v, err := c.TryRecv()
		if err != nil {
			break
		}
		got = append(got, v)
	}

	if len(got) < 2 {
		// The buffer never held two values after the receives: no full
		// verdict may have been given.
		if verdict == roomNo {
			t.Errorf("full verdict inside Close, but the channel delivered only %v (capacity 2)", got)
		}
		if err99 == ErrFull {
			t.Errorf("TrySend(99) = ErrFull inside Close, but the channel delivered only %v", got)
		}
		if !ready {
			t.Errorf("a select's send case was not ready inside Close (a full verdict), but the channel delivered only %v", got)
		}
	}
	if (out7 == outOK) != slices.Contains(got, 7) {
		t.Errorf("TrySend(7) outcome %d, received %v", out7, got)
	}
	if err99 != ErrClosed {
		t.Errorf("a TrySend that found no room inside Close: %v, want ErrClosed", err99)
	}
}

// TestLenInsideCloseSkipsDoomedSender replays Len inside a Close that has
// read the room and not yet taken effect (capacity 1). A sender parks in
// cell 1 on a full buffer; Close reads the room (it ends at 1) and pauses; a
// receive takes the value in cell 0 and pauses before its buffer expansion,
// so the parked sender is inside the window R + capacity and Len counts it
// as buffered. At Close's OR the sender fails (its cell is past the room
// Close read): a count of 1 would have been true at no instant. A count
// taken while a Close is under way must be taken again after it.
func TestLenInsideCloseSkipsDoomedSender(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	sent := make(chan error)
	go func() { sent <- c.Send(2) }() // ticket 1: parks in cell 1
	seg := c.sendSeg.Load()
	awaitBlocked(seg.cell(1)) // until the sender has parked
	end := c.beginClose()
	// A receive takes ticket 0 and the value in cell 0, and pauses before
	// its buffer expansion.
	r := c.r.Add(1) - 1
	seg.cell(0).elem = 0
	if n, ok := c.count(c.r.Load()); ok && n != 0 {
		t.Errorf("Len's count inside Close = %d; the parked sender fails at Close", n)
	}
	lenRes := make(chan int)
	go func() { lenRes <- c.Len() }()
	if err := c.finishClose(end); err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != ErrClosed {
		t.Errorf("the parked Send = %v, want ErrClosed", err)
	}
	if n := <-lenRes; n != 0 {
		t.Errorf("Len = %d, want 0", n)
	}
	c.expandFor(r, seg, true) // the receive goes on
	if v, err := c.TryRecv(); err != ErrClosed {
		t.Errorf("TryRecv = %v, %v; want ErrClosed", v, err)
	}
}
