package chans

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"

	"github.com/scalable-go/chans/internal/sched"
)

// Ticket counters. S carries Close's bit so that a send learns of Close from
// the same fetch-and-add that gives it its ticket.
const (
	closedBit   = 1 << 63
	counterMask = closedBit - 1
	openMark    = ^uint64(0) // closeAt while the channel is open
)

// cellSeg returns the segment holding ticket t, found from start (read from
// root before the ticket was taken, so start is not past it in the life it
// had then), or nil when that segment was removed: every cell in it was
// given up, so the caller's counter is raised past it and the caller takes
// a new ticket. start is not nil: the callers check for a zero Chan first.
// Its common case, start holding t, inlines into sendOp and recvOp (cost
// 80, the inliner's budget: nothing more fits here; with the check for nil
// it cost 84 once the id became atomic); cellSegFar does the rest.
func (c *Chan[T]) cellSeg(root *atomic.Pointer[segment[T]], start *segment[T], t uint64) *segment[T] {
	if start.id.Load() == t>>segShift {
		return start
	}
	return c.cellSegFar(root, start, t)
}

// cellSegFar is cellSeg where start does not hold t: a later segment, found
// by a walk that moves root along. The counter raised past a removed segment
// is the one root serves: S for sendSeg, R for recvSeg.
func (c *Chan[T]) cellSegFar(root *atomic.Pointer[segment[T]], start *segment[T], t uint64) *segment[T] {
	ctr := &c.r
	if root == &c.sendSeg {
		ctr = &c.s
	}
	id := t >> segShift
	s, sid := c.findAndMove(root, start, id)
	if sid == id {
		return s
	}
	raise(ctr, sid<<segShift)
	return nil
}

// raise lifts the counter part of ctr to at least to, keeping Close's bit.
func raise(ctr *atomic.Uint64, to uint64) {
	for {
		cur := ctr.Load()
		if cur&counterMask >= to || cur&closedBit != 0 {
			return
		}
		if ctr.CompareAndSwap(cur, to) {
			return
		}
	}
}

// errCancelled is what send and recv return when done was closed while they
// were parked and they withdrew; the Context methods return ctx.Err() instead.
var errCancelled = errors.New("chans: cancelled")

// sendContext is SendContext, parking on w if it is not nil.
func (c *Chan[T]) sendContext(ctx context.Context, v T, w *waiter) error {
	if ctx == nil {
		panic("chans: nil Context")
	}
	if err := ctx.Err(); err != nil { // only what needs no waiting
		if e := c.trySend(v); e != ErrFull {
			return e
		}
		return err
	}
	if err := c.send(ctx.Done(), v, w); err != errCancelled {
		return err
	}
	return ctx.Err()
}

// send is Send, giving up when done is closed (never, if done is nil), and
// parking on w if it is not nil.
func (c *Chan[T]) send(done <-chan struct{}, v T, w *waiter) error {
	if rb := c.rb; rb != nil {
		if rb.sendFast(v) {
			return nil
		}
		return rb.send(done, v)
	}
	return sendErrs[c.sendOp(done, v, &party[T]{w: w})] // modePark is the zero mode
}

// trySend is TrySend: before each ticket it asks, without writing anything
// shared, whether the channel is closed or full, so that a failing TrySend
// costs a few loads; sendOp then claims one ticket with room.
func (c *Chan[T]) trySend(v T) error {
	if c.rb != nil {
		return c.rb.trySendErr(v)
	}
	for {
		sw := c.s.Load()
		if sw&closedBit != 0 {
			return ErrClosed
		}
		if c.capacity >= 0 {
			switch c.fullCheck(sw) {
			case roomNo:
				return ErrFull // S ≥ B, S ≥ R + capacity and no expansion owed: nothing written
			case roomClosing:
				c.awaitClosed()
				return ErrClosed // after Close took effect: nothing written
			case roomWait: // an expansion is owed; the next round looks at Close
				runtime.Gosched()
				continue
			}
		}
		p := party[T]{m: modeTry} // here, so that the failing path above does not clear it
		if out := c.sendOp(nil, v, &p); out != outRestart {
			return sendErr(out)
		}
	}
}

// sendErr is the error a send returns for its outcome: a table, so that
// send stays small enough to inline.
func sendErr(out outcome) error { return sendErrs[out] }

var sendErrs = [...]error{
	outOK:         nil,
	outRestart:    ErrClosed, // not returned by sendOp
	outNoWait:     ErrFull,
	outClosed:     ErrClosed,
	outCancelled:  errCancelled,
	outRegistered: ErrClosed, // not returned outside a select
	outHole:       ErrClosed, // not a send outcome
}

// sendOp is the send side's ticket loop, for every mode and kind of
// channel: it takes send tickets until a cell step settles the send, and
// parks a party in modePark that registered. For a select (modeSelect) it
// returns outRegistered with the registration's cell in p.seg and p.i. A Try
// send on a buffered or rendezvous channel claims at most one ticket per
// call, and only one with room (claimSends, as SendMany does): below the
// buffer's end, or on a rendezvous channel below R, where a receive holds
// the matching ticket and will take the value, registered or not, as from
// a plain send. So a Try send never meets a full buffer in its cell, and
// gives it up only when a Close fails it (mayDeliver); with a
// fetch-and-add, two sends that both saw one free slot could both take
// tickets, and the second gave its cell up: the channel's first hole, which
// ends its implicit expansions for good. With
// no such ticket, sendOp reports outRestart and trySend looks at the
// counters again.
func (c *Chan[T]) sendOp(done <-chan struct{}, v T, p *party[T]) outcome {
	if p.m == modeSelect {
		c.holesOn() // the case may be withdrawn inside the buffer: a hole
	}
	for {
		seg := c.sendSeg.Load()
		var t uint64
		if p.m == modeTry && c.capacity >= 0 {
			var k uint64
			if t, k = c.claimSends(1); k == 0 {
				return outRestart // full or closed at a load: trySend decides which
			}
			p.room = c.capacity > 0 // below B or R + capacity (on a rendezvous channel, below R: roomFor)
		} else {
			t = c.s.Add(1) - 1
		}
		sched.Point()
		if t&closedBit != 0 {
			return outClosed // the failed send takes effect at this ticket
		}
		var out outcome
		if seg == nil {
			c.mustBeMade() // a zero Chan: no segment
		}
		if seg = c.cellSeg(&c.sendSeg, seg, t); seg == nil {
			if p.m == modeTry {
				return outRestart
			}
			continue
		}
		i := int(t & segMask)
		if c.capacity < 0 {
			out = c.sendUnbounded(seg, i, v)
		} else {
			if c.capacity > 0 {
				// sendCell's common case first, where it inlines
				// (bufferInto): an empty cell with room by inBuffer, by
				// the Try send's claim (p.room) or by roomSeen.
				cl := seg.cell(i)
				if st := cl.state.Load(); (st == stInBuffer || st == nil && (p.room || t < c.roomSeen.Load())) && c.s.Load()&closedBit == 0 && bufferInto(cl, st, v) {
					return outOK
				}
			}
			out = c.sendCell(seg, i, t, v, p)
		}
		if out == outRegistered {
			if p.m == modeSelect {
				p.seg, p.i = seg, i
				return out
			}
			_, out = c.park(done, seg, i, p)
		}
		if out != outRestart || p.m == modeTry {
			return out // a Try send asks again before its next ticket (trySend)
		}
	}
}

// recvContext is RecvContext, parking on w if it is not nil.
func (c *Chan[T]) recvContext(ctx context.Context, w *waiter) (T, error) {
	if ctx == nil {
		panic("chans: nil Context")
	}
	if err := ctx.Err(); err != nil { // only what needs no waiting
		v, e := c.tryRecv()
		if e == ErrEmpty {
			e = err
		}
		return v, e
	}
	v, err := c.recv(ctx.Done(), w)
	if err == errCancelled {
		err = ctx.Err()
	}
	return v, err
}

// recv is Recv, giving up when done is closed (never, if done is nil), and
// parking on w if it is not nil.
func (c *Chan[T]) recv(done <-chan struct{}, w *waiter) (T, error) {
	if rb := c.rb; rb != nil {
		if v, ok := rb.recvFast(); ok {
			return v, nil
		}
		return rb.recv(done)
	}
	v, out := c.recvOp(done, &party[T]{w: w}) // modePark is the zero mode
	return v, recvErrs[out]
}

// tryRecv is TryRecv: before each ticket it asks, without writing anything
// shared, whether the channel is empty or closed and drained, so that a
// failing TryRecv costs two loads; recvOp then takes one ticket.
func (c *Chan[T]) tryRecv() (T, error) {
	if c.rb != nil {
		return c.rb.tryRecvErr()
	}
	r := c.r.Load()
	return c.tryRecvAt(r, c.s.Load())
}

// tryRecvSeen is TryRecv for a caller that keeps seen (a Handle; see
// sentFor).
func (c *Chan[T]) tryRecvSeen(seen *atomic.Uint64) (T, error) {
	var zero T
	if c.rb != nil { // a ring's receives go by its head and tail alone
		if c.plainlyEmpty() {
			return zero, ErrEmpty
		}
		return c.rb.tryRecvErr()
	}
	r := c.r.Load()
	sw, keep := c.sentFor(r, seen.Load())
	if keep {
		seen.Store(sw)
	}
	if r >= sw {
		// Plainly empty, as TryRecv says (plainlyEmpty): sentFor loaded
		// S after R, since r is not below seen.
		return zero, ErrEmpty
	}
	return c.tryRecvAt(r, sw)
}

// tryRecvAt is tryRecv on cells after its first loads, r of R and then sw of
// S (or a count S has passed: sentFor), made by the caller (a select's
// receive case, or a Handle, which has just made them to see whether the
// channel is empty). Later rounds load both again.
func (c *Chan[T]) tryRecvAt(r, sw uint64) (T, error) {
	var zero T
	for {
		if r >= sw&counterMask {
			// R ≥ S held at the load of S: every sent value has its receiver.
			if sw&closedBit != 0 {
				return zero, ErrClosed
			}
			c.mustBeMade() // a zero Chan looks empty
			return zero, ErrEmpty
		}
		if sw&closedBit != 0 && r >= c.closeAt.Load() {
			return zero, ErrClosed
		}
		// outNoWait or outRestart: look at the counters again.
		p := party[T]{m: modeTry, lookR: r, lookS: sw} // here, so that the failing path above does not clear it
		if v, out := c.recvOp(nil, &p); out != outNoWait && out != outRestart {
			return v, recvErr(out)
		}
		r = c.r.Load()
		sw = c.s.Load()
	}
}

// sentFor is the load of S that a Try receive makes after loading r of R,
// for a caller that keeps seen, a count of send tickets it loaded before
// (a select's receive case, a Handle): while r is below seen, it returns
// seen without loading S. S only grows, so the sender of every ticket below
// seen still holds its ticket, as a load of S would show, and a receive
// that stays below it reads no line that sends write; while a channel
// keeps a backlog, its receivers load S once per backlog rather than once
// per value. It never stands in for S where r is at or past it: only a
// load of S made after that of R can show the channel empty (R ≥ S there).
// keep says whether the caller should keep the count returned as its new
// seen: only a count loaded here, without Close's bit (so at most
// closeAt: a ticket below seen is never at or past Close either), that
// serves a later receive. Two goroutines keeping counts at once (through
// one Handle) may lower seen, to a count one of them loaded: still a
// count S has passed.
func (c *Chan[T]) sentFor(r, seen uint64) (sw uint64, keep bool) {
	if r < seen {
		return seen, false
	}
	sw = c.s.Load()
	return sw, r+1 < sw && sw&closedBit == 0
}

// recvErr is the error a receive returns for its outcome (see sendErr).
func recvErr(out outcome) error { return recvErrs[out] }

var recvErrs = [...]error{
	outOK:         nil,
	outRestart:    ErrClosed, // not returned by recvOp outside a Try receive
	outNoWait:     ErrEmpty,
	outClosed:     ErrClosed,
	outCancelled:  errCancelled,
	outRegistered: ErrClosed, // not returned outside a select
	outHole:       ErrClosed, // not returned by recvOp
}

// recvOp is the receive side's ticket loop, for every mode and kind of
// channel: it takes receive tickets until a cell step settles the receive,
// runs each ticket's buffer expansion, and parks a party in modePark that
// registered. For a select (modeSelect) it returns outRegistered, with the
// registration's cell in p.seg and p.i. A Try receive claims at most one
// ticket per call, and only one whose sender holds its ticket (below
// recvEnd, as a batch claims): one compare-and-swap of R from the R its
// look loaded and the S it loaded or remembered (p.lookR, p.lookS; see
// sentFor), which it does not load again. It
// then waits for that sender (waitsForSender), so it
// never gives a cell up. With a fetch-and-add, two receives that both saw
// a value could both take tickets, and the one past S gave its cell up:
// that cell's sender took another ticket, and the segment could no longer
// be reused (select loops allocated a segment every few thousand
// messages). If there is no such ticket, recvOp reports outNoWait and
// tryRecvAt looks at the counters again.
//
// One expansion per receive ticket: every ticket below closeAt runs exactly
// one expansion, after its cell step (a receive expands before it parks,
// which full relies on), except one whose cell was a hole an expansion had
// already made good (outRestart from recvCell), which settles without one.
func (c *Chan[T]) recvOp(done <-chan struct{}, p *party[T]) (T, outcome) {
	var zero T
	for {
		seg := c.recvSeg.Load()
		var t uint64
		if p.m == modeTry {
			if t = p.lookR; t >= c.recvEnd(p.lookS) || !c.r.CompareAndSwap(t, t+1) {
				return zero, outNoWait // no such ticket at the look, or R moved since: tryRecvAt looks again
			}
		} else {
			t = c.r.Add(1) - 1
		}
		sched.Point()
		if t >= c.closeAt.Load() {
			c.mustBeMade()         // a zero Chan's closeAt is 0
			return zero, outClosed // before touching any segment: no cell past closeAt is ever used
		}
		// A zero Chan returned above: its closeAt is 0.
		if seg = c.cellSeg(&c.recvSeg, seg, t); seg == nil {
			if p.m == modeTry {
				return zero, outRestart
			}
			continue
		}
		i := int(t & segMask)
		if c.capacity != 0 {
			// recvCell's common case first, where it inlines: a buffered
			// value.
			if cl := seg.cell(i); cl.state.Load() == stBuffered {
				v := cl.elem // the receive takes effect here
				cl.elem = zero
				if c.capacity > 0 {
					// expandFor's common case: an implicit expansion
					// (t below implicitBelow, not switching) of cell
					// b = t + capacity in the segment bufSeg names,
					// which holds no parked sender. The loads of
					// expandFor and expandImplicit, in their order;
					// anything else goes to expandFor, which looks
					// again from the start. Written out here because
					// as a function it would cost the inliner 172,
					// past its budget of 80, and be a call again.
					b := t + uint64(c.capacity)
					h := c.holeFrom.Load()
					if bs := c.bufSeg.Load(); t >= h || h == holesSwitching || bs.id.Load() != b>>segShift {
						c.expandFor(t, seg, true)
					} else if bs.sendRegs.Load() != 0 {
						// A send has registered in b's segment: look at
						// b's cell (no count: skip it, see "Buffer end").
						st := bs.cell(int(b & segMask)).state.Load()
						notPoison(st)
						if isWaiter(st) && st.op == opSend {
							c.expandFor(t, seg, true)
						}
					}
				}
				// The receive is done with its cell, after its expansion
				// (segment.go, "Reuse").
				c.doneWith(cl)
				return v, outOK
			}
		}
		v, out := c.recvCell(seg, i, t, p)
		if out == outOK { // the common case first
			c.expandFor(t, seg, true)
			c.doneWith(seg.cell(i)) // after its expansion (segment.go, "Reuse")
			return v, out
		}
		switch out {
		case outClosed:
			return zero, out
		case outRestart:
			c.settle()
			if p.m == modeTry {
				return zero, out // a Try receive asks again before its next ticket (tryRecv)
			}
			continue
		}
		// outNoWait, outHole: a cell given up is final. outRegistered: a
		// registration pins nothing either, since Close, or a claimer
		// finding its select gone with another case, may cancel it at any
		// moment (cancelledRecv, final).
		c.expandFor(t, seg, false)
		switch out {
		case outHole:
			if p.m == modeTry {
				return zero, outRestart // a Try receive asks again before its next ticket (tryRecv)
			}
			continue
		case outRegistered:
			if p.m == modeSelect {
				p.seg, p.i = seg, i
				return zero, out
			}
			if v, out = c.park(done, seg, i, p); out == outRestart {
				continue
			}
		}
		return v, out
	}
}

// mustBeMade panics if c is a zero Chan rather than one made by New. It is
// called only on paths that a zero Chan reaches (its segment roots are nil,
// its closeAt is 0 and its counters look empty), so it costs the fast paths
// nothing or one load.
func (c *Chan[T]) mustBeMade() {
	if c.sendSeg.Load() == nil && c.rb == nil {
		panic("chans: use of a zero Chan; make channels with chans.New")
	}
}

// plainlyFull is the common case of a failing TrySend, small enough to
// inline into it, so that it answers with no further call: an open
// rendezvous or buffered channel that has never had a hole, with no room at
// the load of R. Its loads go S, roomSeen (below which the answer is no at
// once), R, then plainCap, which stands for roomEnd
// and holeFrom loaded there (it is cleared before either moves, and neither
// moves back): with no hole by that load, none existed at the load of R
// (holesOn comes before any), so B was still the capacity and the buffer
// ended at R + capacity there, which S had reached; and with no Close
// begun by that load, every send this verdict counts is below the room any
// Close will read. So the channel was full at the load of R. For a ring
// (ring.go), whose T and H are S and R, the same loads say T - H ≥ the
// capacity at the load of H with no Close begun by the load of plainCap.
// Anything else (a closed channel, room, holes, a Close under way, an
// unbounded channel, a zero Chan: plainCap 0) goes to trySend. A ticket
// below roomSeen, on S's line, has room (roomFor) and goes to trySend
// before R is loaded: a TrySend that keeps finding room then reads no
// line that receives write (roomSeen stays 0 for a ring).
func (c *Chan[T]) plainlyFull() bool {
	s := c.s.Load()
	if s < c.roomSeen.Load() {
		return false // below an end a send found (roomFor): room, without loading R, which receives write
	}
	r := c.r.Load()
	pc := c.plainCap.Load() // capacity + 1, or 0
	return pc != 0 && s+1 >= r+pc
}

// plainlyEmpty is the common case of a failing TryRecv, small enough to
// inline into it: R ≥ S at the load of S, which also says that the
// channel was open there (Close's bit makes S larger than any R), so every
// value sent had its receiver at that instant (for a ring, T ≤ H there). A
// zero Chan (no segment and no ring) goes to tryRecv, which panics.
func (c *Chan[T]) plainlyEmpty() bool {
	r := c.r.Load()
	return r >= c.s.Load() && (c.sendSeg.Load() != nil || c.rb != nil)
}
