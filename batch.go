package chans

import (
	"context"
	"runtime"

	"github.com/scalable-go/chans/internal/sched"
)

// Batch operations. A batch stands for the sequence of single operations
// its values go through, and meets each cell in the same cell step as they
// do (sendCell, recvCell). What it saves is the traffic on the ticket
// counters: it claims k tickets with one CompareAndSwap, and only tickets
// whose partner is already there, so that no cell of a batch is left empty
// and no sender or receiver it meets has to restart (but for a select still
// registering, whose registration a batch kills as any partner would; the
// select registers again):
//
//   - a receive batch claims tickets [r, r+k) with r+k ≤ S: every one of
//     them has a sender holding its ticket (the ticketed-sender rule then
//     makes each cell step wait for a sender still on its way, never give
//     the cell up); its expansions take k tickets of B with one
//     fetch-and-add (expandN);
//   - a send batch claims tickets [s, s+k) that all have room: below
//     max(B, R + capacity) for a buffered channel, below R for a rendezvous
//     channel (a receiver holds each ticket), any k for an unbounded one.
//
// Where no ticket qualifies, the batch runs one ordinary operation, which
// may park; then it goes on with the next batch.

// SendMany sends the values of vs in order, as len(vs) consecutive Sends by
// the calling goroutine would, and returns how many it sent. It blocks while
// the channel has no room. If the channel is closed it returns (n,
// ErrClosed): exactly vs[:n] were sent, and none of the rest will ever be
// received. On a rendezvous channel each value is handed to a receiver.
//
// Each value takes effect where the Send of that value would.
func (c *Chan[T]) SendMany(vs []T) (int, error) { return c.sendMany(context.Background(), vs, nil) }

// SendManyContext is SendMany that gives up when ctx is done: it returns (n,
// ctx.Err()) where exactly vs[:n] were sent and none of the rest will ever
// be received. If ctx is already done it sends only what needs no waiting.
func (c *Chan[T]) SendManyContext(ctx context.Context, vs []T) (int, error) {
	return c.sendMany(mustCtx(ctx), vs, nil)
}

// RecvMany blocks until at least one value is available, or the channel is
// closed and drained, and then receives into dst every value available at
// that moment, up to len(dst), in order. It returns (n, nil) with n ≥ 1, or
// (0, ErrClosed) once the channel is closed and drained; with an empty dst it
// returns (0, nil) at once.
//
// Each value is received where the Recv that got it would have taken effect.
func (c *Chan[T]) RecvMany(dst []T) (int, error) {
	return c.recvMany(context.Background(), dst, nil, modePark)
}

// RecvManyContext is RecvMany that gives up when ctx is done, returning (0,
// ctx.Err()); it then took nothing. A value handed over as ctx fired is
// returned, never dropped.
func (c *Chan[T]) RecvManyContext(ctx context.Context, dst []T) (int, error) {
	return c.recvMany(mustCtx(ctx), dst, nil, modePark)
}

// TryRecvMany receives into dst, without blocking, every value available,
// up to len(dst), in order. It returns (n, nil) with n ≥ 1, (0, ErrEmpty) if
// the channel was empty at an instant during the call, or (0, ErrClosed)
// once it is closed and drained. With an empty dst it returns (0, nil).
func (c *Chan[T]) TryRecvMany(dst []T) (int, error) {
	return c.recvMany(context.Background(), dst, nil, modeTry)
}

// SendMany is Chan.SendMany, parking on the Handle's waiter.
func (h *Handle[T]) SendMany(vs []T) (int, error) {
	return h.c.sendMany(context.Background(), vs, h.ws)
}

// SendManyContext is Chan.SendManyContext, parking on the Handle's waiter.
func (h *Handle[T]) SendManyContext(ctx context.Context, vs []T) (int, error) {
	return h.c.sendMany(mustCtx(ctx), vs, h.ws)
}

// RecvMany is Chan.RecvMany, parking on the Handle's waiter.
func (h *Handle[T]) RecvMany(dst []T) (int, error) {
	return h.c.recvMany(context.Background(), dst, h.wr, modePark)
}

// RecvManyContext is Chan.RecvManyContext, parking on the Handle's waiter.
func (h *Handle[T]) RecvManyContext(ctx context.Context, dst []T) (int, error) {
	return h.c.recvMany(mustCtx(ctx), dst, h.wr, modePark)
}

// TryRecvMany is Chan.TryRecvMany.
func (h *Handle[T]) TryRecvMany(dst []T) (int, error) {
	return h.c.recvMany(context.Background(), dst, nil, modeTry)
}

// sendMany is SendMany (ctx is context.Background()) and SendManyContext,
// parking on w if it is not nil.
func (c *Chan[T]) sendMany(ctx context.Context, vs []T, w *waiter) (int, error) {
	if c.rb != nil {
		return c.rb.sendMany(ctx, vs)
	}
	c.mustBeMade()
	n := 0
	for n < len(vs) {
		if k := c.sendBatch(vs[n:]); k > 0 {
			n += k
			continue
		}
		if c.s.Load()&closedBit != 0 {
			return n, ErrClosed
		}
		if c.spin > 0 && c.awaitRoom() {
			continue
		}
		// No room for a batch: one Send, which may park (with a done ctx,
		// sendContext only tries).
		var err error
		if ctx.Done() != nil {
			err = c.sendContext(ctx, vs[n], w)
		} else {
			err = c.send(nil, vs[n], w)
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// sendBatch claims the tickets that have room for a prefix of vs, at most
// len(vs) of them, with one CompareAndSwap on S, and delivers vs in order
// into their cells, skipping a cell whose receiver gave it up. It returns how
// many values it sent: 0 when no ticket had room or the channel is closed
// (the caller tells which), and fewer than the tickets it took when cells
// were skipped or Close failed the rest.
func (c *Chan[T]) sendBatch(vs []T) int {
	seg := c.sendSeg.Load() // before the tickets: not past them
	s, k := c.claimSends(uint64(len(vs)))
	if k == 0 {
		return 0
	}
	sched.Point()
	return c.deliverBatch(seg, s, k, vs)
}

// deliverBatch is sendBatch after its claim: it delivers vs in order into
// the cells of the k tickets from s, which were claimed with room, starting
// its walk at seg (loaded before the claim), and returns how many values it
// sent.
func (c *Chan[T]) deliverBatch(seg *segment[T], s, k uint64, vs []T) int {
	n := 0
	failed := false
	p := party[T]{m: modePark, room: true}
	for t := s; t < s+k; t++ {
		id := t >> segShift
		if seg.id.Load() != id {
			var sid uint64
			if seg, sid = c.findAndMove(&c.sendSeg, seg, id); sid != id {
				continue // removed: every cell in it was given up
			}
		}
		i := int(t & segMask)
		if failed {
			// Close failed an earlier ticket of this batch, so it fails
			// this one too (mayDeliver is monotonic in the ticket). The
			// cell's receiver must still learn that no value comes.
			c.failSend(seg, i, t)
			continue
		}
		var out outcome
		if c.capacity < 0 {
			out = c.sendUnbounded(seg, i, vs[n])
		} else {
			// sendCell's common case first, where it inlines
			// (bufferInto): an empty cell, whose ticket has room.
			cl := seg.cell(i)
			if st := cl.state.Load(); (st == nil || st == stInBuffer) && c.s.Load()&closedBit == 0 && bufferInto(cl, st, vs[n]) {
				n++
				continue
			}
			if out = c.sendCell(seg, i, t, vs[n], &p); out == outRegistered {
				// p.room: a send with room never registers.
				panic("chans: send batch registered in a cell with room")
			}
		}
		switch out {
		case outOK:
			n++
		case outClosed:
			failed = true
		}
		// outRestart: the receiver gave the cell up; the value goes to the
		// next ticket.
	}
	return n
}

// awaitRoom spins, up to spinRun loads, while no send ticket has room and
// the channel is open, and reports whether that changed. A SendMany that
// finds the buffer full would otherwise park on its next value and be woken
// by the first receive that makes room, and pay a park and a wake-up for
// every few values while its consumer keeps pace (see BenchmarkBatch).
func (c *Chan[T]) awaitRoom() bool {
	for range spinRun {
		sw := c.s.Load()
		if sw&closedBit != 0 || c.sendRoomEnd(sw, 1) > sw {
			return true
		}
	}
	return false
}

// claimSends claims up to want send tickets that all have room, with one
// CompareAndSwap on S, and returns the first and their number (0 if none
// has room or the channel is closed). Like roomFor, it takes roomSeen, on
// S's line, for the end of the room while the claim fits below it, and
// otherwise loads B and R (sendRoomEnd) and raises roomSeen to what it
// found.
func (c *Chan[T]) claimSends(want uint64) (uint64, uint64) {
	for {
		sw := c.s.Load()
		if sw&closedBit != 0 {
			return 0, 0
		}
		seen := c.roomSeen.Load() // on S's line: a buffered channel's end that a send found before (roomFor)
		end := seen
		if end < sw+want {
			if end = c.sendRoomEnd(sw, want); end <= sw {
				return 0, 0
			}
			if c.capacity > 0 && end > seen {
				c.roomSeen.Store(end)
			}
		}
		k := min(want, end-sw)
		if c.s.CompareAndSwap(sw, sw+k) {
			return sw, k
		}
	}
}

// sendRoomEnd returns a ticket below which every send ticket from s on has
// room (roomFor), for a claim of want tickets: on an unbounded channel s +
// want, on a rendezvous one R (a receiver holds each ticket below it), on a
// buffered one the larger of B and R + capacity.
func (c *Chan[T]) sendRoomEnd(s, want uint64) uint64 {
	switch {
	case c.capacity < 0:
		return s + want
	case c.capacity == 0:
		return c.r.Load()
	}
	return max(c.b.Load(), c.r.Load()+uint64(c.capacity))
}

// failSend fails the send of ticket t in cell i of seg, which its batch will
// not deliver because Close failed an earlier ticket of the batch:
// nil|inBuffer → cancelledSend, or a parked receiver is told to take a new
// ticket (wR → cancelledRecv).
func (c *Chan[T]) failSend(seg *segment[T], i int, t uint64) {
	cl := seg.cell(i)
	for {
		st := cl.state.Load()
		notPoison(st)
		sched.Point()
		switch {
		case st == nil || st == stInBuffer:
			if c.giveUp(seg, i, st, opSend) {
				return
			}
		case st == stResuming:
			// A claimer holds a select's registration: wait for it.
			runtime.Gosched()
		case isWaiter(st) && st.op == opRecv:
			failReceiver(seg, i, st)
		default: // cancelledRecv: the receiver gave up first
			return
		}
	}
}

// recvMany is RecvMany (ctx is context.Background()), RecvManyContext and,
// with mode modeTry, TryRecvMany; it parks on w if it is not nil.
func (c *Chan[T]) recvMany(ctx context.Context, dst []T, w *waiter, m mode) (int, error) {
	if c.rb != nil {
		return c.rb.recvMany(ctx, dst, m == modeTry)
	}
	if len(dst) == 0 {
		return 0, nil
	}
	c.mustBeMade()
	if n := c.recvBatch(dst); n > 0 {
		return n, nil
	}
	// Nothing available to a batch: one receive, which may park (with a done
	// ctx, recvContext only tries); then whatever else is available.
	var v T
	var err error
	switch {
	case m == modeTry:
		v, err = c.tryRecv()
	case ctx.Done() != nil:
		v, err = c.recvContext(ctx, w)
	default:
		v, err = c.recv(nil, w)
	}
	if err != nil {
		return 0, err
	}
	dst[0] = v
	return 1 + c.recvBatch(dst[1:]), nil
}

// recvBatch claims, with one CompareAndSwap on R, the receive tickets of
// values that are available, at most len(dst) of them, and receives them in
// order into dst. It returns how many it received: 0 if none was available,
// and fewer than the tickets it took where senders gave their cells up.
func (c *Chan[T]) recvBatch(dst []T) int {
	if len(dst) == 0 {
		return 0
	}
	seg := c.recvSeg.Load() // before the tickets: not past them
	r, k := c.claimRecvs(uint64(len(dst)))
	if k == 0 {
		return 0
	}
	sched.Point()
	if c.spin > 0 && k > 1 {
		c.awaitLastSender(seg, r+k-1)
	}
	n := 0
	var expansions uint64 // explicit ones owed so far
	implicit := c.implicitBelow()
	p := party[T]{m: modeTry}
	var pend implicitRun[T]
	var zero T
	for t := r; t < r+k; t++ {
		id := t >> segShift
		if seg.id.Load() != id {
			var sid uint64
			if seg, sid = c.findAndMove(&c.recvSeg, seg, id); sid != id {
				continue // removed: every cell in it was given up
			}
		}
		// The sender of t holds its ticket: the Try step waits for it and
		// never gives the cell up (waitsForSender). Before it may wait, the
		// explicit expansions owed so far run: while they are owed, full
		// verdicts wait too.
		i := int(t & segMask)
		cl := seg.cell(i)
		st := cl.state.Load()
		if expansions > 0 && (st == nil || st == stInBuffer) {
			c.expandRun(&pend)
			c.expandN(expansions)
			expansions = 0
		}
		var v T
		var out outcome
		if st == stBuffered {
			// recvCell's common case, without the call: the receive takes
			// effect here.
			v, out = cl.elem, outOK
			cl.elem = zero
		} else {
			v, out = c.recvCell(seg, i, t, &p)
		}
		switch out {
		case outOK:
			dst[n] = v
			n++
			switch {
			case c.capacity <= 0:
				c.doneWith(cl)
			case t < implicit:
				// Its implicit expansion, and then doneWith, wait for the
				// end of a run of cells (implicitRun).
				if pend.n == implicitRunMax || pend.n > 0 && (pend.seg != seg || pend.from+uint64(pend.n) != t) {
					c.expandRun(&pend)
				}
				if pend.n == 0 {
					pend.seg, pend.from = seg, t
				}
				pend.n++
			default:
				expansions++ // explicit (holesOn): expandAt holds the segment it expands in
				c.doneWith(cl)
			}
		case outHole: // after the first hole, so explicit (holesOn)
			expansions++ // one expansion per receive ticket (recvOp)
		case outRestart:
			c.settle()
		default:
			// outNoWait, outClosed: not reached, every ticket is below S
			// and below closeAt.
			panic("chans: receive batch gave up a cell whose sender holds its ticket")
		}
	}
	c.expandRun(&pend)
	c.expandN(expansions)
	return n
}

// implicitRun is a run of consecutive receive tickets of one batch, all in
// one segment and below the first hole, whose values the batch has taken
// and whose implicit expansions it has yet to run. A receive batch runs them
// a run at a time rather than after each value: the cell of ticket t +
// capacity that an implicit expansion looks at is the one a sender is
// writing at that moment on a full channel (its ticket got room when the
// batch took its tickets), and looking at it value by value pulled that
// cell's line back and forth between the two cores (with 64-value batches at
// GOMAXPROCS 2 on a full 1024-slot channel, that load was a quarter of the
// CPU time). Deferring them is what a receive that is slow between its
// value and its expansion does anyway; the cells stay unmarked (not
// consumed) until their expansions have run, which keeps the run's
// segment out of retirement as for one receive.
type implicitRun[T any] struct {
	seg  *segment[T]
	from uint64
	n    int
}

// implicitRunMax bounds an implicitRun, so that a large batch does not hold
// its senders' wake-ups back for long.
const implicitRunMax = 64

// expandRun runs the implicit expansions of run, then marks its cells
// consumed (doneWith), and empties it. Where every cell the expansions
// would look at lies in the segment the buffer root names, and no send has
// registered there (expandImplicit), one look at the root stands for all of
// them.
func (c *Chan[T]) expandRun(run *implicitRun[T]) {
	if run.n == 0 {
		return
	}
	lo := run.from + uint64(c.capacity)
	if id := lo >> segShift; id != (lo+uint64(run.n)-1)>>segShift || !c.noSendRegs(id) {
		for t := run.from; t < run.from+uint64(run.n); t++ {
			c.expandImplicit(t+uint64(c.capacity), run.seg, true)
		}
	}
	for t := run.from; t < run.from+uint64(run.n); t++ {
		c.doneWith(run.seg.cell(int(t & segMask)))
	}
	run.n = 0
}

// noSendRegs reports whether no send has registered in the segment with
// the given id, by expandImplicit's fast paths: the root is that segment
// and its count of registrations is 0, or the root is the tail and that
// segment is not linked yet. The caller's cells keep that segment in its
// life (pinned).
func (c *Chan[T]) noSendRegs(id uint64) bool {
	seg := c.bufSeg.Load()
	rid := seg.id.Load()
	switch {
	case rid == id:
		return seg.sendRegs.Load() == 0
	case rid < id:
		return seg.next.Load() == nil && seg.id.Load() == rid
	}
	return false
}

// awaitLastSender spins, up to spinRun loads, while the cell of ticket t,
// the last of a receive batch, lies in seg and its sender, which holds its
// ticket, has not come to it. It only delays the batch, which then receives
// cell by cell as before. With GOMAXPROCS > 1 a batch that follows a
// SendMany closely otherwise reads each cell just as the sender writes it,
// and pulls that cell's cache line across cores at every value; waiting for
// the last cell of the run lets the sender finish it first (64-value
// batches at GOMAXPROCS 2 took 0.87 of their time over eight alternating
// rounds on a 2-core Intel VM, bench/results/ring-batch-2core-3185804).
func (c *Chan[T]) awaitLastSender(seg *segment[T], t uint64) {
	if t>>segShift != seg.id.Load() {
		return // not in seg: a batch that crosses segments does without
	}
	cl := seg.cell(int(t & segMask))
	for range spinRun {
		if st := cl.state.Load(); st != nil && st != stInBuffer {
			return
		}
	}
}

// spinRun bounds awaitLastSender: a few microseconds, about what a sender
// takes to write a run of 64 values.
const spinRun = 4096

// claimRecvs claims up to want receive tickets whose senders hold theirs
// (below S, and below closeAt once closed), with one CompareAndSwap on R, and
// returns the first and their number (0 if there are none). The loads go R,
// then S, as in tryRecv.
func (c *Chan[T]) claimRecvs(want uint64) (uint64, uint64) {
	for {
		r := c.r.Load()
		s := c.recvEnd(c.s.Load())
		if r >= s {
			return 0, 0
		}
		k := min(want, s-r)
		if c.r.CompareAndSwap(r, r+k) {
			return r, k
		}
	}
}

// recvEnd is the end of the receive tickets whose senders hold theirs, for
// sw, a load of S: S, and once closed no further than closeAt (waiting for
// Close to store it).
func (c *Chan[T]) recvEnd(sw uint64) uint64 {
	s := sw & counterMask
	if sw&closedBit != 0 {
		s = min(s, c.closedAt())
	}
	return s
}

// mustCtx returns ctx, panicking if it is nil, as the other Context methods do.
func mustCtx(ctx context.Context) context.Context {
	if ctx == nil {
		panic("chans: nil Context")
	}
	return ctx
}
