package chans

import (
	"runtime"
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
		c := New[int](k)
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
		// L resumes: it records the room it sees now, then its OR fails.
		c.recordRoom()
		if old := c.s.Or(closedBit); old&closedBit == 0 {
			t.Fatal("the losing Close won")
		}
		// Y resumes in its cell.
		seg := c.cellSeg(&c.sendSeg, yseg, yt, &c.s)
		out := c.sendBounded(nil, seg, int(yt&segMask), yt, 20, nil, true)
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
		c := New[int](1)
		if round%2 == 1 {
			if err := c.TrySend(7); err != nil { // one value buffered
				t.Fatal(err)
			}
		}
		want := round % 2
		// Close, up to its OR.
		c.recordRoom()
		sc := c.s.Or(closedBit) & counterMask
		// A send after the OR fails without touching its cell.
		if err := c.Send(1); err != ErrClosed {
			t.Fatalf("round %d: Send after the OR = %v, want ErrClosed", round, err)
		}
		res := make(chan int)
		go func() { res <- c.Len() }()
		runtime.Gosched()
		c.closeAt.Store(sc) // Close goes on
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
		c := New[int](1)
		if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
			t.Fatal(err)
		}
		sent := make(chan error)
		go func() { sent <- c.Send(2) }() // ticket 1: parks in cell 1
		seg := c.sendSeg.Load()
		cl := &seg.cells[1]
		for !isWaiter(cl.state.Load()) {
			runtime.Gosched() // until the sender has registered
		}
		// A receive takes ticket 0 and the value in cell 0; its expansion
		// takes B's ticket 1 and claims the parked sender: wS → resuming.
		c.r.Add(1)
		seg.cells[0].elem = 0
		if b := c.b.Add(1) - 1; b != 1 {
			t.Fatalf("expansion ticket %d, want 1", b)
		}
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
		c.settled.Add(1)
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
