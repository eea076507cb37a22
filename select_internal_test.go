package chans

import (
	"testing"
	"time"
)

// TestSelectRecvDoesNotTurnAwayTicketedSender replays the schedule behind the
// capacity-1 linearizability failure with selects (chans_smallseg,
// chans_perturb; found by TestLinz once in about 166,000 histories, explained
// by a reviewer): a TrySend takes ticket 0 and pauses before its cell; a
// TrySend full verdict counts it as buffered; a select's receive case then
// registers in cell 0 (whose sender has its ticket), and its expansion gives
// the buffer a slot that a later Send takes; the paused sender, claiming the
// registration while the select registers, is killed and restarts. The value
// sent after the full verdict is then received first.
//
// The receive case must instead wait for the sender. On the old code its
// register call returns at once, having registered; the 100 ms are only the
// time given to that bug to show itself. On the fixed code the register call
// cannot return before the paused sender writes its cell, so the test passes
// however the goroutines are scheduled.
func TestSelectRecvDoesNotTurnAwayTicketedSender(t *testing.T) {
	c := newCells[int](1)

	// TrySend(7): room (S=0 < B=1), ticket 0, pauses before its cell.
	if c.fullCheck(c.s.Load()) != roomYes {
		t.Fatal("empty channel: no room")
	}
	seg := c.sendSeg.Load()
	s := c.s.Add(1) - 1

	// TrySend(2000007): full. The paused send took effect at its ticket.
	if v := c.fullCheck(c.s.Load() & counterMask); v != roomNo {
		t.Fatalf("second send: verdict %d, want roomNo", v)
	}

	// Select(OnSend(c, 1000008), OnRecv(c)) registers its receive case first.
	sc := new(selCall)
	sc.init()
	cases := []Case{OnSend(c, 1000008, nil), OnRecv(c, nil)}
	sc.cases, sc.order = cases, []int{1, 0}
	sc.st.state.Store(selReg)
	rc := cases[1].k.(*recvCase[int])
	done := make(chan bool, 1)
	go func() { done <- rc.register(sc, 1) }()

	select {
	case won := <-done:
		if won {
			t.Fatalf("receive case completed with %v before the sender of cell 0 wrote it", rc.v)
		}
		// The registration sits in cell 0 although its sender has ticket 0,
		// and its expansion made cell 1 room.
		if err := c.Send(2000009); err != nil { // ticket 1: buffered at once
			t.Fatal(err)
		}
		out := c.sendStep(seg, s, 7, modeTry)
		v, err := c.TryRecv()
		t.Fatalf("select receive registered in cell %d whose sender holds its ticket: the sender's outcome %d "+
			"(restart = %d), first value received %v (%v); a full verdict counted that sender before 2000009 was sent",
			s, out, outRestart, v, err)
	case <-time.After(100 * time.Millisecond):
		// Fixed: the receive case waits for the sender it cannot turn away.
	}

	if out := c.sendStep(seg, s, 7, modeTry); out != outOK {
		t.Fatalf("paused TrySend(7): outcome %d, want outOK", out)
	}
	if won := <-done; !won || !rc.ok || rc.v != 7 {
		t.Fatalf("receive case: won %v, value %v %v; want 7", won, rc.v, rc.ok)
	}
	if c.TrySend(2000009) != nil {
		t.Fatal("TrySend into the emptied channel failed")
	}
	if v, err := c.TryRecv(); err != nil || v != 2000009 {
		t.Fatalf("TryRecv = %v, %v; want 2000009", v, err)
	}
}

// TestSelectRecvWaitsForTicketedSender: a select's receive case on a
// buffered or unbounded channel does not register in a cell whose sender
// holds its ticket. Len has already counted that send; a registration there
// could be killed by the sender itself while the select registers (a claimer
// may not commit a registering select), and the sender would then deliver
// at a later ticket, behind a send that started after Len returned. On a
// rendezvous channel nothing counts a send before its hand-off, and the case
// registers. The rule is waitsForSender; the second half replays the
// schedule on an unbounded channel and checks the order of the values.
func TestSelectRecvWaitsForTicketedSender(t *testing.T) {
	for _, capacity := range []int{0, 1, 2, Unbounded} {
		c := newCells[int](capacity)
		c.s.Add(1) // a sender holds ticket 0 and has not written its cell
		want := capacity != 0
		if got := c.waitsForSender(0, c.closeAt.Load(), modeSelect); got != want {
			t.Errorf("capacity %d: a select's receive case waits for the ticketed sender: %v, want %v", capacity, got, want)
		}
		if c.waitsForSender(1, c.closeAt.Load(), modeSelect) {
			t.Errorf("capacity %d: the case waits at ticket 1, which no sender holds", capacity)
		}
	}

	c := newCells[int](Unbounded)
	segA := c.sendSeg.Load()
	tA := c.s.Add(1) - 1 // sender A holds ticket 0
	if n := c.Len(); n != 1 {
		t.Fatalf("Len = %d, want 1 (A's send)", n)
	}
	sc := new(selCall)
	sc.init()
	rc := &recvCase[int]{c: c, caseReg: newCaseReg(opRecv, &c.selfPending)}
	sc.cases, sc.order = []Case{{k: rc}}, []int{0}
	sc.st.state.Store(selReg)
	done := make(chan bool)
	go func() { done <- rc.register(sc, 0) }()                          // waits for A rather than registering
	if out := c.sendUnbounded(segA, int(tA&segMask), 1); out != outOK { // A writes its cell
		t.Fatalf("A's send: outcome %d, want outOK (turned away by the select)", out)
	}
	if !<-done || rc.v != 1 {
		t.Fatalf("the select did not complete with A's value 1: got %d", rc.v)
	}
	if err := c.Send(2); err != nil { // B
		t.Fatal(err)
	}
	if v, err := c.TryRecv(); err != nil || v != 2 {
		t.Fatalf("TryRecv = %d, %v; want 2", v, err)
	}
}

// TestSelectKeepsStateInLeadCase checks where a package-level select takes
// its call state from: a case list used once gives its state back to the
// pool (cases built for one call must not take states out of it for good),
// and a list used again keeps one state in its lead case, its first channel
// case, which every later call over the list uses. A select that a
// callback runs over the same list finds the state the outer call has
// given back before its callback, and gives it back in turn.
func TestSelectKeepsStateInLeadCase(t *testing.T) {
	c := newCells[int](Unbounded)
	got := 0
	cases := []Case{
		OnDone(nil, nil), // a signal case is never the lead
		OnRecv(c, func(v int, _ bool) { got += v }),
		OnRecv(newCells[int](0), nil),
	}
	lead := cases[1].k.reg()
	send := func(v int) {
		if err := c.Send(v); err != nil {
			t.Fatal(err)
		}
	}

	send(1)
	if Select(cases...) != 1 || lead.kept != nil || !lead.used {
		t.Fatalf("after one call: kept %p, used %v; want the state back in the pool and the case marked used", lead.kept, lead.used)
	}
	send(2)
	Select(cases...)
	kept := lead.kept
	if kept == nil {
		t.Fatal("after a second call the lead case keeps no state")
	}
	send(3)
	if sc, r := selCallFor(cases); sc != kept || r != lead || lead.kept != nil {
		t.Fatalf("selCallFor = %p, %p; want the kept state %p, taken out of lead %p", sc, r, kept, lead)
	} else {
		doneWith(sc, r)
	}
	Select(cases...) // takes 3

	// A callback that selects over the same list again.
	inner := true // no nested call until the lead case keeps a state
	cases[1] = OnRecv(c, func(v int, _ bool) {
		got += v
		if !inner {
			inner = true
			send(4)
			Select(cases...)
		}
	})
	lead = cases[1].k.reg()
	for range 2 { // make the new lead case keep a state
		send(0)
		Select(cases...)
	}
	inner = false
	send(5)
	Select(cases...)
	if got != 1+2+3+4+5 {
		t.Fatalf("received %d in all, want 15", got)
	}
	if lead.kept == nil {
		t.Fatal("after nested calls the lead case keeps no state")
	}
	if n := c.Len(); n != 0 {
		t.Fatalf("%d values left", n)
	}
}
