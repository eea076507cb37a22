package chans

import (
	"runtime"
	"testing"
)

// TestFullWaitsForExpansionPastHole replays, step by step, the schedule
// behind the last linearizability failures on buffered channels (found by
// TestLinz under chans_smallseg,chans_perturb, at capacities 2 and 3): a
// receive's buffer expansion takes its ticket from B, meets a cell whose
// sender gave up, and has not yet taken the ticket that makes the hole good.
// B then counts the hole as room while the buffer has a free slot, and a
// TrySend that believed B said ErrFull on a channel holding fewer values
// than its capacity. A full verdict must wait for that expansion.
func TestFullWaitsForExpansionPastHole(t *testing.T) {
	c := newCells[int](1)
	if err := c.TrySend(1); err != nil { // cell 0: the buffer is full
		t.Fatal(err)
	}
	// A send takes ticket 1, finds no room, parks, and its context fires:
	// its cell is a hole.
	seg := c.sendSeg.Load()
	cancelSend(t, c, 2)
	// A receive takes ticket 0 and the value in cell 0; its expansion takes
	// B's ticket 1, the hole, and pauses there.
	r := c.r.Add(1) - 1
	if st := seg.cell(int(r)).state.Load(); st != stBuffered || seg.cell(int(r)).elem != 1 {
		t.Fatalf("cell 0 holds %v in state %p, want 1 buffered", seg.cell(int(r)).elem, st)
	}
	seg.cell(int(r)).elem = 0
	b := c.b.Add(1) - 1
	if st := seg.cell(int(b)).state.Load(); st != stCancelledSend {
		t.Fatalf("the expansion's cell %d is in state %p, want the hole", b, st)
	}

	// Nothing is buffered and the capacity is 1: the next send has room,
	// or must wait for the expansion, but the buffer is not full.
	next := c.s.Load() & counterMask
	if v := c.fullCheck(next); v == roomNo {
		t.Fatalf("send %d: full verdict while the expansion past the hole in cell %d runs and nothing is buffered", next, b)
	}

	// The expansion resumes: it makes the hole good and takes another
	// ticket, which finishes it.
	if c.expandCell(seg, int(b&segMask)) {
		t.Fatal("the expansion took the hole for a buffer cell")
	}
	c.expand(noPin)
	if v := c.fullCheck(next); v != roomYes {
		t.Fatalf("send %d after the expansion: verdict %d, want room", next, v)
	}
	if err := c.TrySend(3); err != nil {
		t.Fatalf("TrySend into an empty channel of capacity 1: %v", err)
	}
	if v, err := c.TryRecv(); err != nil || v != 3 {
		t.Fatalf("TryRecv = %v, %v; want 3", v, err)
	}
}

// sendStep runs the send cell step of ticket t, which the test took by hand,
// as a send in mode m would, parking if it registers.
func (c *Chan[T]) sendStep(seg *segment[T], t uint64, v T, m mode) outcome {
	p := party[T]{m: m}
	i := int(t & segMask)
	out := c.sendCell(seg, i, t, v, &p)
	if out == outRegistered {
		_, out = c.park(nil, seg, i, &p)
	}
	return out
}

// TestExpansionClaimsParkedSender checks that the implicit expansion of a
// receive claims a send parked for want of room, before the receive
// returns, on buffered channels on cells of several capacities, for Recv
// (whose common case is written out in recvOp) and for a RecvMany that
// takes several values. The expansion skips the cell when no send has
// registered in its segment (expandImplicit, its copy in recvOp, and
// expandRun for a batch); the sender counts itself before it registers,
// and looks at R again after, so that one of the two sees the other.
// (Broken once by taking the count out of sendCell, and once by skipping
// the cell in recvOp's copy: the parked send stayed registered after the
// receive.)
func TestExpansionClaimsParkedSender(t *testing.T) {
	for _, capacity := range []int{1, 2, 64, segSize - 1, segSize, segSize + 1} {
		for _, batch := range []int{1, 8} {
			c := newChan[int](capacity, false, 2)
			done := make(chan struct{})
			go func() {
				defer close(done)
				for v := range capacity + batch {
					c.Send(v) // the last batch of sends park
				}
			}()
			// Wait until the send of ticket capacity is parked in its cell.
			last := uint64(capacity)
			for !c.sendParked(last) {
				runtime.Gosched()
			}
			dst := make([]int, batch)
			got := 1
			if batch == 1 {
				if v, ok := c.Recv(); !ok || v != 0 {
					t.Fatalf("cap %d: Recv = %d, %v; want 0, true", capacity, v, ok)
				}
			} else {
				var err error
				if got, err = c.RecvMany(dst); err != nil || got == 0 || dst[0] != 0 {
					t.Fatalf("cap %d: RecvMany = %d, %v, first %d; want values from 0", capacity, got, err, dst[0])
				}
			}
			if c.sendParked(last) {
				t.Fatalf("cap %d, batch %d: the send of ticket %d is still parked after the receive of ticket 0 made room", capacity, batch, last)
			}
			for got < capacity+batch {
				n, err := c.RecvMany(dst)
				if err != nil {
					t.Fatalf("cap %d: RecvMany = %d, %v", capacity, n, err)
				}
				got += n
			}
			<-done
		}
	}
}

// sendParked reports whether the cell of send ticket s holds a registered
// send, once the sender has taken the ticket.
func (c *Chan[T]) sendParked(s uint64) bool {
	if c.s.Load()&counterMask <= s {
		return false
	}
	for seg := c.cursor.Load(); seg != nil; seg = seg.next.Load() {
		if seg.id.Load() == s>>segShift {
			st := seg.cell(int(s & segMask)).state.Load()
			return isWaiter(st) && st.op == opSend
		}
	}
	return false
}

// TestTryRecvClaimsOnlyTicketedSenders replays a Try receive that lost a
// race: it saw a value (R < S), then another receive took that value before
// it took a ticket, so that its claim finds R = S. On cells of every kind,
// it must take no ticket past S: such a ticket's cell has no sender yet,
// and a receive that cannot wait would give it up, sending that cell's
// sender to another ticket and keeping the segment from reuse. It reports
// the channel empty, leaves R and the cell alone, and the next send lands
// in that cell. After Close, sends that failed hold tickets past closeAt:
// the claim takes none of them either, and TryRecv reports the channel
// closed.
func TestTryRecvClaimsOnlyTicketedSenders(t *testing.T) {
	for _, capacity := range []int{0, 1, 64, Unbounded} {
		c := newChan[int](capacity, false, 2)
		if capacity != 0 {
			if err := c.Send(1); err != nil {
				t.Fatal(err)
			}
			// The racing receive: R = S = 1 after it.
			if v, ok := c.Recv(); !ok || v != 1 {
				t.Fatalf("cap %d: Recv = %v, %v; want 1", capacity, v, ok)
			}
		}
		// The Try receive's step after its look (tryRecvAt: r < S there).
		r := c.r.Load()
		p := party[int]{m: modeTry}
		if _, out := c.recvOp(nil, &p); out != outNoWait {
			t.Fatalf("cap %d: Try receive on an empty channel: outcome %d, want outNoWait", capacity, out)
		}
		if got := c.r.Load(); got != r {
			t.Fatalf("cap %d: the Try receive moved R from %d to %d: it took a ticket with no sender", capacity, r, got)
		}
		if st := c.recvSeg.Load().cell(int(r & segMask)).state.Load(); st != nil {
			t.Fatalf("cap %d: cell %d is in state %p after the Try receive, want it untouched", capacity, r, st)
		}
		if capacity == 0 {
			continue // no send completes alone on a rendezvous channel
		}
		if err := c.Send(2); err != nil {
			t.Fatal(err)
		}
		if st := c.sendSeg.Load().cell(int(r & segMask)).state.Load(); st != stBuffered {
			t.Fatalf("cap %d: the next send left cell %d in state %p, want buffered", capacity, r, st)
		}
		if v, err := c.TryRecv(); err != nil || v != 2 {
			t.Fatalf("cap %d: TryRecv = %v, %v; want 2", capacity, v, err)
		}
		if err := CheckInvariants(c); err != nil {
			t.Fatalf("cap %d: %v", capacity, err)
		}
	}
	for _, capacity := range []int{0, 1, Unbounded} {
		c := newChan[int](capacity, false, 2)
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(1); err != ErrClosed { // a ticket at closeAt: S = closeAt + 1
			t.Fatalf("cap %d: Send after Close = %v, want ErrClosed", capacity, err)
		}
		r := c.r.Load()
		if _, out := c.recvOp(nil, &party[int]{m: modeTry}); out != outNoWait {
			t.Fatalf("cap %d: Try receive on a closed, drained channel: outcome %d, want outNoWait", capacity, out)
		}
		if got := c.r.Load(); got != r {
			t.Fatalf("cap %d: the Try receive moved R from %d to %d past closeAt %d", capacity, r, got, c.closeAt.Load())
		}
		if _, err := c.TryRecv(); err != ErrClosed {
			t.Fatalf("cap %d: TryRecv on a closed, drained channel = %v, want ErrClosed", capacity, err)
		}
	}
}

// TestTrySendClaimsOnlyTicketsWithRoom replays a TrySend that lost a race:
// it saw room, then another send took the last free slot before it took a
// ticket. On buffered and rendezvous channels on cells it must take no
// ticket without room (on a rendezvous channel, below R): a ticket past the
// buffer's end would leave it nothing to do but give its cell up, the
// channel's first hole, after which buffer expansions are explicit and
// segments are no longer reused. It takes no ticket and leaves the cell
// alone; TrySend reports the channel full; once a receive makes room, the
// next TrySend lands in that cell.
func TestTrySendClaimsOnlyTicketsWithRoom(t *testing.T) {
	for _, capacity := range []int{0, 1, 64} {
		c := newChan[int](capacity, false, 2)
		for v := range capacity { // the racing sends: the buffer is full
			if err := c.TrySend(v); err != nil {
				t.Fatal(err)
			}
		}
		// The TrySend's step after its look (trySend: roomYes there).
		s := c.s.Load()
		p := party[int]{m: modeTry}
		if out := c.sendOp(nil, 99, &p); out != outRestart {
			t.Fatalf("cap %d: Try send into a full channel: outcome %d, want outRestart", capacity, out)
		}
		if got := c.s.Load(); got != s {
			t.Fatalf("cap %d: the Try send moved S from %d to %d: it took a ticket without room", capacity, s, got)
		}
		if h := c.holeFrom.Load(); h != noHoles {
			t.Fatalf("cap %d: the Try send switched the channel to holes (holeFrom %d)", capacity, h)
		}
		if cl := c.findCell(s); cl != nil && cl.state.Load() != nil { // nil: its segment is not made yet
			t.Fatalf("cap %d: cell %d is in state %s after the Try send, want it untouched", capacity, s, stateName(cl.state.Load()))
		}
		if err := c.TrySend(99); err != ErrFull {
			t.Fatalf("cap %d: TrySend into a full channel = %v, want ErrFull", capacity, err)
		}
		if capacity == 0 {
			continue // a rendezvous TrySend needs a parked receiver
		}
		wantRecv(t, c, 0)
		if err := c.TrySend(100); err != nil {
			t.Fatalf("cap %d: TrySend after a receive made room = %v", capacity, err)
		}
		if st := c.findCell(s).state.Load(); st != stBuffered {
			t.Fatalf("cap %d: the TrySend left cell %d in state %s, want buffered", capacity, s, stateName(st))
		}
		for v := 1; v < capacity; v++ {
			wantRecv(t, c, v)
		}
		wantRecv(t, c, 100)
		if err := CheckInvariants(c); err != nil {
			t.Fatalf("cap %d: %v", capacity, err)
		}
	}
}

// TestTrySendMeetsArrivingReceive replays, on a rendezvous channel on
// cells, a Recv that has taken its ticket and not yet reached its cell when
// a TrySend comes. The receive is under way and will take whatever its cell
// holds, so the TrySend delivers, as a Send would, into the cell, rather
// than give the cell up after a moment (which sent the receive to another
// ticket and kept the segment from reuse); the receive then returns the
// value.
func TestTrySendMeetsArrivingReceive(t *testing.T) {
	c := newChan[int](0, false, 2)
	seg := c.recvSeg.Load()
	r := c.r.Add(1) - 1 // the Recv's ticket; it pauses before its cell
	if err := c.TrySend(5); err != nil {
		t.Fatalf("TrySend with a receive under way = %v, want nil", err)
	}
	if st := seg.cell(int(r & segMask)).state.Load(); st != stBuffered {
		t.Fatalf("cell %d after the TrySend: %s, want buffered", r, stateName(st))
	}
	v, out := c.recvCell(seg, int(r&segMask), r, &party[int]{m: modePark}) // the Recv resumes
	if out != outOK || v != 5 {
		t.Fatalf("the receive under way: %d, outcome %d; want 5, outOK", v, out)
	}
	c.doneWith(seg.cell(int(r & segMask)))
	if err := c.TrySend(6); err != ErrFull {
		t.Fatalf("TrySend with no receive = %v, want ErrFull", err)
	}
	if err := CheckInvariants(c); err != nil {
		t.Fatal(err)
	}
}
