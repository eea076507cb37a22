package chans

import (
	"runtime"

	"github.com/scalable-go/chans/internal/sched"
)

// The cell protocol, for every kind of channel. This file holds the cell
// states, every transition between them, the rules that decide each
// transition, and the linearization points; ops.go holds the one ticket loop
// per side that drives the cell steps here, close.go holds Close and Len.
//
// ===== Counters =====
//
// S counts send tickets and carries Close's bit (bit 63); R counts receive
// tickets; B (buffered channels only) counts buffer-expansion tickets and
// starts at the capacity; it is used only from the first send that may leave
// a hole on (holeFrom, holesOn), before which each receive ticket r expands
// cell r + capacity with no ticket. settled counts the receive tickets whose
// expansion is done (or that owe none), from the same point; closeAt is S's count at Close (openMark while
// open); roomEnd is openMark while no Close has begun, closingMark while one
// is under way, then the room Close read (see "Close and the room");
// roomSeen (buffered channels) is a buffer end some send saw, a lower bound
// on the end from then on, which sends below it use instead of loading B and
// R (roomFor, and claimSends for the sends that claim only tickets with
// room: Try sends, select send cases, batches); both raise it.
//
// ===== Invariants =====
//
// As implications, in the style of the Go runtime's chan.go. "Quiescent"
// means no operation under way and none parked; CheckInvariants (a test
// file) verifies the quiescent ones after every Porcupine history, fuzz step
// and stress run.
//
//	roomSeen                    ≤ max(B, R + capacity), and 0 unless capacity > 0
//	S's closed bit clear        ⟹ closeAt = openMark, and roomEnd ∈ {openMark, closingMark}
//	S's closed bit set          ⟹ closeAt ≤ S, once stored; roomEnd is a bound read before the
//	                              bit was set, once stored (readers wait: closedAt, closedRoom)
//	roomEnd = closingMark       ⟹ a Close has begun and will set the bit; no full verdict stands
//	holeFrom = noHoles          ⟹ B = capacity, settled = 0, no cell is cancelledSend or holePaid
//	                              (buffered channels), and the buffer ends at R + capacity
//	holeFrom = R0 (switched)    ⟹ settled ≤ R (each receive ticket at or past R0 settles at most once)
//	switched, R > settled       ⟹ an expansion is owed by a running receive: B lags the buffer end
//	capacity > 0, quiescent, open, switched ⟹ settled = R and B = capacity + R + (holePaid cells at or past R)
//	cell idx < min(R, S) (and < closeAt once closed), quiescent ⟹ the cell is not nil or inBuffer
//	cell is inBuffer            ⟹ capacity > 0 and idx < B
//	cell is wS                  ⟹ capacity ≥ 0 (unbounded sends never wait)
//	cell is wR or wS            ⟹ the registration's owner is parked or about to park (select:
//	                              registering or parked); its partner, if it holds its ticket, claims it
//	quiescent                   ⟹ no cell is a registration or resuming; only buffered cells in
//	                              [R, S) hold a value; their number is at most the capacity
//	unbounded                   ⟹ the values buffered are S - R when R ≤ S
//	quiescent                   ⟹ each segment's counts of given-up cells (counts) are its
//	                              cancelledRecv cells, and its cancelledSend, holePaid and
//	                              holeSeen cells
//
// ===== Cell states and their histories =====
//
// Every send takes a ticket s from S, every receive a ticket r from R, and
// (buffered channels only) every buffer expansion a ticket b from B; the
// send and the receive with equal tickets meet in the cell of that index. A
// cell's state only moves forward, through one of the histories below. S, R:
// the sender and the receiver of the cell; EB: the buffer expansion whose
// ticket is the cell's index; X: Close. Histories 1-4 are the unbounded ones
// (seed 002's nil → element and nil → waiter, plus cancellation); buffered
// and rendezvous channels add the rest, where wS is seed 002's weakWaiter (a
// sender parked until the buffer reaches it) and inBuffer its sentinel.
//
//	#   events                                      history
//	1   S, R                                        nil → buffered
//	2   R parks, S                                  nil → wR → done
//	3   R parks and gives up (ctx, Close), S        nil → wR → cancelledRecv          (S restarts)
//	4   (none: see below)
//	5   EB, S, R                                    nil → inBuffer → buffered
//	6   EB, R parks, S                              nil → inBuffer → wR → done
//	7   EB, R parks and gives up, S                 nil → inBuffer → wR → cancelledRecv
//	8   S parks, EB, R                              nil → wS → buffered               (EB, or S's second look, moves the value into the buffer)
//	9   S parks, R                                  nil → wS → taken                  (R takes it before EB came)
//	10  S parks and gives up (ctx, Close), R, EB    nil → wS → cancelledSend → (holePaid →) holeSeen
//	11  S cannot wait (TrySend, done ctx), X, R, EB nil → cancelledSend → (holePaid →) holeSeen  (see below)
//
// History 4 was a receive that cannot wait (TryRecv, a done context, a
// select's try) giving its cell up. None does: such a receive takes a ticket
// only below S (claimRecvs), so the cell's sender holds its ticket, and the
// receive waits for it (waitsForSender) rather than leave it a cell to
// restart from. So a cell is given up by a receive only through wR.
//
// On a rendezvous channel a select's receive case may take its own given-up
// cell back (rejoin): history 3 then goes nil → wR → cancelledRecv → wR →
// ..., each return to wR made by the case that gave the cell up, while it
// holds the segment and only if the cell's sender has not taken its ticket
// (S ≤ the cell's index, Close's bit clear) and no reclaim is under way at
// loads after the move; if either fails, the case moves the cell back to
// cancelledRecv, or finds that sender (or Close) already claiming the
// registration. So a cell's state moves forward except for this one step,
// which no sender can have seen.
//
// History 11 comes only from Close: a send that cannot wait takes only a
// ticket with room (claimSends: in the buffer, or on a rendezvous channel
// one whose receive holds its ticket), and gives its cell up only when a
// Close that read a room below its ticket took effect before the send
// reached its cell (mayDeliver); on a buffered channel that Close switched
// it to explicit expansions first (holesOn).
//
// In 10 and 11 (buffered channels) the first of R and EB to reach the hole
// makes it good: EB by taking another ticket, moving it to holePaid; R by
// running an expansion of its own, moving it straight to holeSeen. Both
// then restart or finish as usual. R coming after EB moves holePaid on to
// holeSeen: holeSeen says the hole's receiver has met it (rendezvous
// channels have no holes to pay: there the history ends at cancelledSend).
//
// A select registration in place of wR or wS, and any parked sender claimed
// by R or EB, is claimed in two steps, w → resuming → next; a registration
// whose select went with another case, or a parked sender found after Close,
// ends w → resuming → cancelledX (history 3, 7 or 10).
//
// Who moves a cell from each state:
//
//	nil            S: → buffered if the cell is in the buffer (s < B, or
//	                  s < R + capacity) or its receiver has its ticket
//	                  (s < R), else → wS or (after Close) cancelledSend
//	               R: → wR
//	               EB (explicit only): → inBuffer
//	inBuffer       S: → buffered;  R: → wR
//	wR             S: → done;  R itself or X: → cancelledRecv
//	wS             EB or S itself (second look): → buffered;  R: → taken;
//	               S itself or X: → cancelledSend. EB, R and the second
//	               look go through resuming and look at Close's bit there:
//	               after Close they move it to cancelledSend instead.
//	resuming       the claimer of a select registration, to its next state
//	cancelledSend  the first to come of (buffered channels) R: → holeSeen,
//	               and EB: → holePaid
//	holePaid       R (buffered channels), once it has met the hole: → holeSeen
//	buffered, done, taken  R, once it has the value: → consumed (below)
//	consumed, holeSeen, cancelledRecv: final (cancelledSend is final in
//	rendezvous channels)
//
// consumed: a receive that got a value (histories 1, 2, 5, 6, 8, 9, and a
// select's case in their place) moves its cell on to consumed as its last
// action on it, after reading elem and, in a buffered channel, after the
// implicit expansion it owes (recvOp, collect, recvBatch). holeSeen is the
// same last action for the receiver of a hole (recvCell). A segment whose
// cells are all final has no party left to act on it, and is retired;
// one whose cells are all consumed is reused (segment.go, "Reuse"). Both
// are plain stores: only the receive writes the cell from buffered, done,
// taken or holePaid on.
//
// ===== Buffer end =====
//
// Seed 002 lets a sender block unless s < R + capacity. Once
// waiters can be cancelled that is wrong (seed 000, section 3.2): a
// cancelled sender inside R..R+capacity leaves a hole, and a later sender
// would block while the buffer has room. So B is an explicit counter,
// starting at the capacity: every receive that does not end in a
// cancelledSend cell runs one buffer expansion (expand), which takes a ticket b
// from B and makes cell b part of the buffer; an expansion that finds
// cancelledSend takes another ticket, so holes are never counted as room.
// Rendezvous channels have no buffer and no B: s < R is the only room.
//
// While no send has given up a cell, there is no hole and the buffer ends
// exactly at R + capacity, so B would only repeat R. Until then each receive
// ticket r runs its expansion on cell r + capacity without a ticket
// (expandImplicit), and B and settled are left alone: a buffered pair costs
// two read-modify-writes fewer. The first send that may give up a cell
// switches the channel, once, to explicit expansions (holesOn), at a receive
// count R0: tickets below R0 stay implicit, those at or past it take tickets
// from B, which holesOn sets to R0 + capacity. holesOn explains why no
// implicit expansion meets a hole.
//
// An implicit expansion only looks for a sender parked in cell r +
// capacity: it neither marks the cell inBuffer nor loads S (the line every
// send writes), and it writes nothing unless it claims a parked sender. In
// exchange, a plain sender that found no room registers (nil → wS) and then
// asks roomFor once more, the second look (sendCell): if it has room now it
// claims its own registration as the expansion would. The receive's
// fetch-and-add on R comes before its load of the cell; the sender's
// registration comes before its second load of R. So either the expansion
// finds the registration, or the second look finds the room (or both, and
// one claim wins): a sender never stays parked with room. Select send cases
// and sends that may give up a cell switch to explicit expansions first, so
// only plain senders meet implicit ones.
//
// The expansion does not even load the cell while no send has registered in
// the cell's segment in this life: a sender adds one to the segment's
// sendRegs before it registers, and the expansion loads sendRegs after its
// receive moved R. If that load reads 0, the registration (if any) comes
// after it, and so does the second look, which then finds the room. On a
// full channel the cell r + capacity is the one a sender is writing at that
// moment: with one producer and one consumer moving 64-value batches at
// GOMAXPROCS 2, the load of it was a quarter of the CPU time, the cell's
// line pulled across cores at every value.
//
// ===== Linearization points =====
//
// A send that delivers without parking takes effect at
// the fetch-and-add (for a batch, and a Try send on a buffered or
// rendezvous channel, the compare-and-swap) that gave it the ticket of its
// last attempt (an attempt
// ends early only in a cell its receiver gave up, and then nobody saw it;
// to keep it so, receivers obey the ticketed-sender rule, waitsForSender); a
// send that parks takes effect at the claimer's transition to buffered or
// taken. A receive that gets a value takes effect just after the send it
// pairs with: at that send's point if the receive's ticket came first,
// otherwise at its own ticket (receives, like sends, are ordered by ticket).
// This is why a send whose ticket predates Close may still deliver after the
// closed bit is set: it took effect before Close.
//
// ===== Close and the room =====
//
// Close takes effect at its OR of the closed bit into
// S. A send whose ticket predates the OR and which reaches its cell after
// it delivers only if its ticket is below roomEnd (mayDeliver), a bound on
// the room that Close reads before its OR: every cell below it was room at
// the OR, so the send took effect before Close. A send past it fails as if
// it came after Close. For that to agree with every full verdict (TrySend's
// ErrFull, a select's send case found not ready, Len counting a parked
// sender as buffered), each verdict must count as buffered only sends below
// roomEnd. So Close runs in two steps (close.go):
//
//	beginClose   roomEnd: open → closing; then read max(B, R + capacity)
//	finishClose  OR the closed bit into S (Close's linearization point);
//	             the winner stores roomEnd: closing → the bound it read
//
// A full verdict reads roomEnd after its loads of B and R and stands only
// if no Close has begun (fullCheck, count): then all its loads came before
// the bound was read, and the bound covers every send it counted. Otherwise
// it waits for the OR and reports the channel closed. roomEnd is written
// once after the OR and readers of it wait for that store (closedRoom), so
// every send and claimer after Close decides against the same bound.
// ===== Rules =====
//
// Each rule the transitions obey is stated and implemented once:
//
//   - Room (roomFor, fullCheck): a send has room below B, below R, or
//     below R + capacity, or below roomSeen, an end of one of these that a
//     send saw before; a full verdict waits for owed expansions. A send that
//     cannot wait takes only a ticket with room (claimSends; on a rendezvous
//     channel, below R).
//   - The second look (sendCell): a plain sender that registered for room
//     asks for room again, and claims its registration if it has it.
//   - One expansion per receive ticket (recvOp, expandFor): every receive
//     ticket that is not closed runs exactly one expansion, or settles
//     without one where its cell was a hole an expansion had already made
//     good; implicit below holeFrom, explicit from there on.
//   - Holes come after the switch (holesOn): a send calls holesOn before
//     the room check on which it may give its cell up.
//   - The ticketed sender (waitsForSender): a receiver that may give its
//     cell up never does so while the cell's sender holds its ticket; a
//     receive that cannot wait takes only such a ticket (claimRecvs), so it
//     gives no cell up at all.
//   - The in-window parked sender (asBuffered): a plain sender parked inside
//     the buffer window counts as buffered; nobody withdraws or fails it.
//   - Close and the room (mayDeliver, doomed): see above.
//   - Giving up a cell (giveUp): cancel, count towards segment removal, drop.
//   - Taking a cell back (rejoin): a select's receive case on a rendezvous
//     channel moves the cell it gave up back to its registration, holding
//     the segment, and keeps it only if S is still at or below the cell and
//     no reclaim is under way.
//   - Claiming a registration (claim, claimSender, failReceiver, kill).
var (
	markers         [11]waiter
	stBuffered      = &markers[0]  // the value in elem waits for the receiver of this cell
	stInBuffer      = &markers[1]  // an explicit EB made the cell part of the buffer before its sender came
	stDone          = &markers[2]  // a sender put its value in elem for the receiver parked here
	stTaken         = &markers[3]  // the receiver took the value of the sender parked here
	stCancelledSend = &markers[4]  // the sender of this cell gave up; R and EB skip the cell
	stCancelledRecv = &markers[5]  // the receiver of this cell gave up; S skips the cell
	stResuming      = &markers[6]  // a claimer holds the cell while it completes a parked sender or a select
	stHolePaid      = &markers[7]  // cancelledSend whose slot in the buffer was made good (see recvCell)
	stConsumed      = &markers[8]  // the receiver of this cell got its value and is done with it (segment.go, "Reuse")
	stHoleSeen      = &markers[9]  // buffered channels: a hole whose receiver has come, and is done with it (recvCell)
	stPoison        = &markers[10] // builds with the tag chans_perturb: the cells of a retired segment until it is cleared (poison)
)

// outcome is what a cell step tells the ticket loop.
type outcome uint8

const (
	outOK         outcome = iota // delivered, or received
	outRestart                   // the cell is dead for this operation: take a new ticket
	outNoWait                    // the operation would have to wait and may not
	outClosed                    // the channel is closed
	outCancelled                 // the context was done while parked
	outRegistered                // the party's registration is in the cell: it parks (or its select does)
	outHole                      // receiver: the cell was a hole this receive makes good; expand, then restart
)

// mode says what a party may do in a cell where it would have to wait.
type mode uint8

const (
	modePark   mode = iota // register and park until claimed: Send, Recv and their Context variants (the zero mode)
	modeTry                // never wait: TrySend, TryRecv, a context already done; each claims only a ticket its partner can serve (a send: room; a receive: a ticketed sender)
	modeSelect             // register a select case; the select parks once every case is registered
)

// party is the operation working a cell: what it may do, and what it
// registers if it waits. It lives on the caller's stack.
//
// Its fields are ordered to pack into six words: each operation clears one.
type party[T any] struct {
	// w is the Handle's waiter (modePark; nil: take one from a pool) or the
	// select case's registration (modeSelect).
	w  *waiter
	sc *selCall // modeSelect: the select, to tell its own registrations apart
	// Set by register: the waiter registered (and pooled, below).
	own *waiter
	// Set by the ticket loop for a select: where its registration is.
	seg *segment[T]
	i   int

	j int32 // modeSelect: the case's index
	m mode
	// lookR and lookS (modeTry receives): R as the receive's look loaded
	// it, then S loaded after it, or a count S has passed (sentFor); its
	// claim starts from them (recvOp).
	lookR, lookS uint64
	// room says that the send's ticket had room when it was claimed (a send
	// batch claims only such tickets, claimSends); room only grows, so the
	// cell step need not ask roomFor again.
	room   bool
	pooled bool // own came from a pool
}

// Spin budget, in loads of the cell. A partner running on another core is
// usually a few hundred nanoseconds away, while parking and waking cost a
// microsecond or more; but a spinner holds its P, which a partner that is not
// running needs. Measured on 2 cores (ping-pong and 2+2 rendezvous MPMC at
// GOMAXPROCS 2): 512 loads made ping-pong ten times slower, 64 made
// rendezvous MPMC about twice as slow as none; 16 and one yield did best on
// both; yielding after registering rather than before costs ping-pong
// about a third (see spinWhile). A non-blocking receive whose sender has its
// ticket waits for it, yielding after spinPark loads.
//
// A buffered channel of two slots or more is another case: its producers
// and consumers do not take turns, and (our reading) the one that finds the
// buffer full or empty usually has a partner running on the other core,
// about to make room or to send. With 512 rounds there rather than 16, at
// GOMAXPROCS 2: P producers and P consumers on 64 slots took 0.69-0.81 of
// their time and the select loop 0.78-0.86 in every set measured (1.10x
// native's time to 0.79x, and 1.25x to 1.15x, in eight rounds of the bar
// in alternating order); with work 0.82-0.97; 1024 slots with P goroutines
// 0.81-1.02; 1024 slots with 1000 goroutines lost (1.00-1.20). A
// sender's round then loaded R as well as its cell; without those loads
// (see spinForRoom) that row took 0.77-0.89 of the time. 256 rounds
// gained less (64 slots 0.83, the select loop 0.88-0.95). On one slot 512
// rounds took 1.01-1.10 of the time, so one slot keeps spinPark
// (bench/results/spin-zen5-2core-a2150af). Measured on 2 cores only.
const (
	spinPark     = 16  // before registering a waiter, or yielding
	spinBuffered = 512 // the same on a buffered channel of two slots or more
)

// spinBeforePark is how many rounds of loads the cells of a channel of the
// given capacity made at GOMAXPROCS procs spin before they register to park
// (spinWhile, spinForRoom; batches spin while it is not 0): none on one P,
// where the partner cannot run meanwhile; spinBuffered on a buffered
// channel of two slots or more; spinPark otherwise.
func spinBeforePark(capacity, procs int) uint16 {
	switch {
	case procs <= 1:
		return 0
	case capacity > 1:
		return spinBuffered
	}
	return spinPark
}

// spinWhile spins up to c.spin loads (spinBeforePark) for the state of cl
// to leave st before the caller registers to park, and reports whether it
// did: a partner on another P is usually a few hundred nanoseconds away.
// The yield that lets a partner on this P run comes after registering (in
// await), so that the partner finds the registration: yielding before it
// let a polling TrySend or TryRecv on one P turn a blocking partner away
// again and again (40 ms per value at GOMAXPROCS 1).
func (c *Chan[T]) spinWhile(cl *cell[T], st *waiter) bool {
	return spinLoads(cl, st, int(c.spin))
}

// spinForRoom is spinWhile for the send of ticket s in cell cl of seg,
// which found no room. It only delays the sender's next look: sendCell
// decides what to do after it.
//
// On one slot it stops once a receive has made room (s < R + capacity),
// loading R at every round. On a larger buffer it does not load R while it
// spins. R's line is the one that every receive's fetch-and-add writes,
// and a sender loading it in a loop takes that line from the consumers at
// every load, slowing the receives it waits for; a sender that went on at
// the first free slot would also find the buffer full again at its next
// send, and load R again, once per value. Where the cell of ticket q = s -
// capacity + k, k = min(capacity/8, 16), lies in seg, the sender watches
// that cell: q's receive writes it once it has taken its value, and then
// R > q, so that s and the k tickets after it have room (R + capacity >
// s + k). It stops at once if that receive has written it already (the
// cell is consumed; seg is in its current life while s's cell is not
// final, so the mark is from this life), and otherwise loads R at each
// change of the cell, stopping once s has room. A sender that goes on then
// finds the room for its next sends below roomSeen (raised by sendCell's
// roomFor), without loading R. Where q's cell lies in an earlier segment
// (for the first capacity - k tickets of each segment, so for every ticket
// on buffers of segSize + 16 slots or more) the sender spins on its own
// cell only, for the whole budget unless that cell changes, and sendCell
// loads R after it.
//
// Measured at GOMAXPROCS 2 only, on our 2-core VM, against loading R at
// every round (sets of six or eight rounds in alternating order, medians
// of the paired ratios; bench/results/stores-zen5-2core-7f97344): on 1024
// slots, where the own cell alone is watched, P producers and P consumers
// without work took 0.67, 0.70, 0.81, 0.90 and 1.03 of the time in five
// sets, with 1000 goroutines 0.77-0.89, and one producer and one consumer
// 0.69 (ten rounds: 1.18x native's time to 0.81x); on 64 slots 0.95-1.02
// and the select loop 0.96-0.99 in three sets, where spinning on the own
// cell alone took 1.08-1.12 and 1.16-1.29; the rows with work 0.96-1.08. A
// consumer that drains with TryRecv through the Chan took 0.91-1.17 of the
// time: its loads of S are its cost. On one slot, watching a cell took
// 1.02-1.12 of the time: there the sender spins only spinPark rounds, and
// R moves before the cell is written.
func (c *Chan[T]) spinForRoom(seg *segment[T], cl *cell[T], s uint64) {
	capa := uint64(c.capacity)
	var w *cell[T] // the cell of ticket q, where it is watched
	var wst *waiter
	if k := min(capa/8, 16); capa > 1 && s >= capa && (s-capa+k)>>segShift == s>>segShift {
		w = seg.cell(int((s - capa + k) & segMask))
		if wst = w.state.Load(); wst == stConsumed {
			return // R > q already
		}
	}
	for i := 0; i < int(c.spin); i++ {
		if cl.state.Load() != nil {
			return
		}
		switch {
		case capa == 1: // one slot: R at every round
			if s < c.r.Load()+capa {
				return
			}
		case w != nil:
			if st := w.state.Load(); st != wst {
				wst = st
				if s < c.r.Load()+capa {
					return
				}
			}
		}
	}
}

// spinLoads spins up to n loads for the state of cl to leave st.
func spinLoads[T any](cl *cell[T], st *waiter, n int) bool {
	for i := 0; i < n; i++ {
		if cl.state.Load() != st {
			return true
		}
	}
	return false
}

// ===== Rules =====

// roomFor reports whether the send with ticket s may complete without a
// receiver at hand: its cell is in the buffer (s < B), or its receiver has
// its ticket (s < R), or s < R + capacity. The last is a lower bound on the
// buffer end that holds even while the buffer expansion of a receive that
// has already taken effect is still under way (B lags then): the cells in
// [R, s) are fewer than the capacity, so they cannot hold a full buffer.
// The loads go S (by the caller), then B, then R, so that a false answer held
// at the instant of the load of B.
//
// A buffered channel first asks roomSeen, an end that a send found here
// before: the end only grows, so a ticket below it has room, as loads of B
// and R here would show, and a send that stays below it reads no line that
// receives write. A send that finds room past it raises it; two sends
// raising it at once may lower it again, to an end that one of them found,
// which is still a lower bound.
func (c *Chan[T]) roomFor(s uint64) bool {
	if c.capacity <= 0 {
		return s < c.r.Load()+uint64(c.capacity)
	}
	seen := c.roomSeen.Load()
	if s < seen {
		return true
	}
	end := c.b.Load()
	if s >= end {
		if end = max(end, c.r.Load()+uint64(c.capacity)); s >= end {
			return false
		}
	}
	if end > seen {
		c.roomSeen.Store(end)
	}
	return true
}

// Full verdicts (fullCheck, and trySend around it): a send with ticket s
// finds no room (roomNo) when, for a buffered channel, no buffer expansion
// is under way or owed either, so that the buffer was full at the load of
// B; or room after all (roomYes); or no room while a Close is under way
// (roomClosing: the verdict waits until Close has taken effect, and the
// send fails as closed).
//
// While an expansion is owed, B lags behind the true end of the buffer: a
// receive has taken effect, or an expansion has taken a ticket that turned
// out to be a hole and is about to take another. R + capacity does not see
// the holes in [R, S), so only the expansions themselves can tell. Every
// receive ticket owes one expansion, except one that met a hole an
// expansion had made good already; settled counts those tickets and the
// expansions that have finished, so an expansion is owed while R >
// settled. The verdict (roomWait) then waits, yielding, and asks again: for
// running receives only, since a receive expands before it parks.
//
// The loads go settled, B, R (after roomSeen, which can only answer room).
// If the tickets settled by the first load cover every receive ticket at
// the last, no expansion ran between the two loads (each would belong to
// one of those tickets, settled before it ran): B stood still at the end
// the finished expansions had made, and s was past it.

// room is fullCheck's verdict.
type room uint8

const (
	roomYes     room = iota // the send has room
	roomNo                  // the buffer was full at the load of B
	roomWait                // an expansion is owed: ask again
	roomClosing             // no room, and a Close has begun: the operation fails as closed once Close takes effect
)

// fullCheck is one round of full. It repeats roomFor's loads so that one
// load of R serves both tests: the loads go roomSeen (below which the
// answer is room at once), then settled, B, R, then roomEnd.
// A verdict of no room stands only if roomEnd still showed no Close begun:
// then every load came before any Close read the room (beginClose), so the
// sends this verdict counts as buffered are all below that Close's bound and
// deliver even if they reach their cells after it.
func (c *Chan[T]) fullCheck(s uint64) room {
	var settled uint64
	if c.capacity > 0 {
		if s < c.roomSeen.Load() {
			return roomYes // below an end a send found before (roomFor), with no load of the lines receives write
		}
		settled = c.settled.Load()
		if s < c.b.Load() {
			return roomYes
		}
	}
	r := c.r.Load()
	if s < r+uint64(c.capacity) {
		return roomYes
	}
	if c.roomEnd.Load() != openMark {
		return roomClosing
	}
	if c.capacity == 0 || r <= settled {
		return roomNo
	}
	if c.holeFrom.Load() == noHoles {
		// No hole had appeared by the load of R (holesOn comes before any),
		// so R + capacity was the end of the buffer there: expansions are
		// implicit and none is owed.
		return roomNo
	}
	return roomWait // an expansion is owed
}

// inWindow reports whether cell idx lies inside the buffer: below B, or
// below R + capacity (B may lag while expansions are owed).
func (c *Chan[T]) inWindow(idx uint64) bool {
	return c.capacity > 0 && c.roomFor(idx)
}

// asBuffered is the in-window parked sender rule: a plain sender registered
// as w in cell idx counts as buffered while the channel is open if the cell
// lies inside the buffer window (inWindow), and once it is closed if its
// ticket is below the room Close read (mayDeliver). An expansion, or the
// cell's receiver, is bound to claim it, so nobody fails or withdraws it:
// not its own context (await), not Close's walk or a Close it sees after
// registering (doomed), and Len counts it (countValues). A select's
// registration never counts: its select may go with another case.
//
// Open, the window is a lower bound on the room that any later Close reads
// (B and R only grow), so a sender counted while open is still below
// roomEnd once closed.
func (c *Chan[T]) asBuffered(idx uint64, w *waiter) bool {
	if w.isSel {
		return false
	}
	if c.s.Load()&closedBit != 0 {
		return idx < c.closedRoom()
	}
	return c.inWindow(idx)
}

// mayDeliver reports whether the send with ticket s, which has just found
// room (or a parked receiver, which is room), may deliver. If Close's bit was
// clear at this load, the send takes effect at this load, where it had room
// and the channel was open. If Close came first, the send may still take
// effect just before Close, but only if it had room then: roomEnd is a lower
// bound on the room at Close. Otherwise it fails as if it came after Close (it
// is still under way, so it may), even though room appeared later: a full
// channel must not take more values once closed.
func (c *Chan[T]) mayDeliver(s uint64) bool {
	return c.s.Load()&closedBit == 0 || s < c.closedRoom()
}

// doomed reports whether Close has made the registration w in cell idx
// unable to complete: a receive at or past closeAt (no send there
// delivers), or a send after Close unless it counts as buffered. A party
// that registered looks at this after its registration, and Close walks the
// cells after its OR, so one of them sees the other.
func (c *Chan[T]) doomed(idx uint64, w *waiter) bool {
	if w.op == opRecv {
		return idx >= c.closeAt.Load()
	}
	return c.s.Load()&closedBit != 0 && !c.asBuffered(idx, w)
}

// senderTicketed reports whether the sender of cell r holds its ticket and
// will write the cell: r < S, and r below closeAt, as the caller loaded it (a
// send with a ticket at or past closeAt fails without touching its cell).
func (c *Chan[T]) senderTicketed(r, closeAt uint64) bool {
	return r < closeAt && r < c.s.Load()&counterMask
}

// waitsForSender is the ticketed-sender rule, for the receiver of the empty
// cell r in mode m. Full and empty verdicts count a sender that holds its
// ticket as sent; if its receiver gave the cell up, the send would restart
// at a later ticket, behind sends that came after it. So a receiver that may
// give the cell up waits for that sender instead, yielding, never parking:
//   - a Try receive always (it claims only such tickets: claimRecvs);
//   - a select's receive case on a buffered or unbounded channel (its
//     registration may be killed by that very sender while the select
//     registers, or withdrawn when another case wins); on a rendezvous
//     channel no verdict counts a send before its hand-off, so the case
//     registers;
//   - a parked receive whose context fires (await) does not withdraw;
//   - a receive that may park registers: it withdraws only through await.
func (c *Chan[T]) waitsForSender(r, closeAt uint64, m mode) bool {
	switch m {
	case modePark:
		return false
	case modeSelect:
		if c.capacity == 0 {
			return false
		}
	}
	return c.senderTicketed(r, closeAt)
}

// awaitSender waits, yielding after spinPark loads and never parking, for
// the sender of cell r, which has its ticket, to move the cell on from st,
// or for Close to show that ticket past closeAt (the send then fails without
// writing the cell).
func (c *Chan[T]) awaitSender(cl *cell[T], st *waiter, r uint64) {
	for i := 0; cl.state.Load() == st && r < c.closeAt.Load(); i++ {
		if i >= spinPark {
			runtime.Gosched()
		}
	}
}

// ===== Cell steps =====

// bufferInto is the common case of sendCell, small enough to inline into
// the ticket loops (sendOp, sendBatch), which call it before sendCell:
// cell cl of the send's ticket was found in state st, empty (nil, or
// inBuffer after an expansion), and the send has room by a test that needs
// no read-modify-write (its caller's: the cell is inBuffer, the ticket is
// below roomSeen, or the batch claimed it with room), and the channel is
// open (mayDeliver's first test, also the caller's). The send writes its
// value and takes effect with the compare-and-swap st → buffered, as in
// sendCell. If the compare-and-swap fails (the cell moved on since st was
// loaded), bufferInto reports false and sendCell, which writes the value
// again, takes every case from the start.
func bufferInto[T any](cl *cell[T], st *waiter, v T) bool {
	cl.elem = v
	sched.Point()                             // value written, not published
	return casMark(&cl.state, st, stBuffered) // nil|inBuffer → buffered: the send takes effect
}

// sendCell is the sender's step in cell i of seg, with ticket s, for a
// buffered or rendezvous channel (unbounded.go has the unbounded one). It
// ends the send (outOK, outClosed), gives the cell up (outNoWait), or leaves
// the party registered (outRegistered), or tells the ticket loop to take a
// new ticket (outRestart).
func (c *Chan[T]) sendCell(seg *segment[T], i int, s uint64, v T, p *party[T]) outcome {
	cl := seg.cell(i)
	cl.elem = v
	spun := false
	for {
		st := cl.state.Load()
		notPoison(st)
		sched.Point()
		switch {
		case st == nil || st == stInBuffer:
			if st == stInBuffer || p.room || s < c.roomSeen.Load() || c.roomFor(s) {
				// (roomSeen is roomFor's first test, here where it
				// inlines; it stays 0 but for buffered channels. On a
				// rendezvous channel the room is a receive holding the
				// cell's ticket: it takes the value when it comes. A Try
				// send claims only such a ticket, so its receive is never
				// a TryRecv: each claims a ticket only once the other side
				// holds the matching one, and the two never meet.)
				if !c.mayDeliver(s) {
					if c.giveUp(seg, i, st, opSend) { // nil|inBuffer → cancelledSend: the send fails after Close
						return outClosed
					}
					continue
				}
				if casMark(&cl.state, st, stBuffered) { // nil|inBuffer → buffered: the send takes effect
					return outOK
				}
				continue
			}
			switch p.m {
			case modeTry:
				// A Try send's ticket has room (claimSends, p.room): the
				// case above took it.
				panic("chans: a Try send without room")
			case modePark:
				if !spun {
					spun = true
					c.spinForRoom(seg, cl, s)
					continue
				}
			}
			if c.capacity > 0 {
				seg.sendRegs.Add(1) // before registering: see "Buffer end"
				sched.Point()       // counted, not registered: an expansion may skip the cell now
			}
			if c.register(cl, nil, opSend, p) { // nil → wS: wait until EB or R claims it
				if c.secondLook(seg, i, s, p) {
					return outOK
				}
				return outRegistered
			}
		case st == stCancelledRecv:
			drop(cl)
			return outRestart
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opRecv:
			if p.m == modeSelect && st.isSel && p.sc.owns(st) {
				c.selfCollide(seg, i, st, p.sc)
				continue
			}
			if !c.mayDeliver(s) {
				failReceiver(seg, i, st) // wR → cancelledRecv: the receiver takes a new ticket
				continue
			}
			if claim(seg, i, st, stDone) { // wR → done: the send takes effect, handed to the parked receiver
				st.wakeUp(resOK)
				return outOK
			}
		default:
			panic("chans: corrupt cell state in send")
		}
	}
}

// secondLook is the second look (see "Buffer end") of a plain sender that
// has just registered p.own in cell i of seg for want of room: a receive
// whose ticket came after the sender's first room check may have made the
// room, and its implicit expansion may have looked at the cell before the
// registration. If the send of ticket s has room now, the sender claims its
// own registration as that expansion would (wS → resuming → buffered, the
// send's linearization point, or cancelledSend after Close), and
// secondLook reports true for a send that took effect. Otherwise, or where
// a claimer came first, or Close failed the send (res is then written), the
// owner parks as usual and collects the outcome.
func (c *Chan[T]) secondLook(seg *segment[T], i int, s uint64, p *party[T]) bool {
	sched.Point() // registered, not yet looked again: receives, expansions and Close may come here
	if p.m != modePark || c.capacity <= 0 || !c.roomFor(s) {
		return false
	}
	if !c.claimSender(seg, i, p.own, stBuffered) {
		return false
	}
	putWaiter(p.own, p.pooled, &sendWaiters)
	return true
}

// recvCell is the receiver's step in cell i of seg, with ticket r, for every
// kind of channel. It returns the value (outOK), or ends the receive
// (outClosed), gives the cell up (outNoWait), leaves the party registered
// (outRegistered), or tells the ticket loop to take a new ticket: outHole
// after making good the hole this cell was, outRestart where an expansion
// made it good already. The ticket loop runs the receive's expansion.
func (c *Chan[T]) recvCell(seg *segment[T], i int, r uint64, p *party[T]) (T, outcome) {
	cl := seg.cell(i)
	spun := false
	var zero T
	for {
		st := cl.state.Load()
		notPoison(st)
		sched.Point()
		switch {
		case st == stBuffered:
			v := cl.elem // the receive takes effect here
			cl.elem = zero
			return v, outOK
		case st == nil || st == stInBuffer:
			closeAt := c.closeAt.Load()
			if r >= closeAt {
				return zero, outClosed // no send at or past closeAt delivers
			}
			if c.waitsForSender(r, closeAt, p.m) {
				c.awaitSender(cl, st, r)
				continue
			}
			if p.m == modeTry {
				// A Try receive's ticket is below S (claimRecvs), so its
				// sender holds one and waitsForSender held above.
				panic("chans: a Try receive without a ticketed sender")
			}
			if p.m == modePark && !spun {
				spun = true
				if c.spinWhile(cl, st) {
					continue
				}
			}
			if c.register(cl, st, opRecv, p) { // nil|inBuffer → wR: wait until S claims it
				return zero, outRegistered
			}
		case st == stCancelledSend || st == stHolePaid:
			// A hole, left by a sender that gave up. In a buffered channel
			// each hole must be made good exactly once, or B drifts from the
			// buffer's true end: the hole's receiver does it with an
			// expansion of its own, or the expansion that reaches the hole
			// does it by taking another ticket (expandCell), whichever moves
			// the cell on from cancelledSend first.
			if c.capacity <= 0 {
				return zero, outRestart // final in a rendezvous channel
			}
			// cancelledSend → holeSeen pays the hole and records the
			// receive's visit in one write; holePaid → holeSeen (below)
			// only records the visit.
			if st == stCancelledSend && casMark(&cl.state, stCancelledSend, stHoleSeen) {
				return zero, outHole
			}
			// holePaid → holeSeen: the receive's visit, its last action
			// on the cell (the expansion or settle it owes follows, in
			// the ticket loop, on other cells). Until it, retirement
			// leaves the segment be: a receive that found its segment
			// retired would take another ticket without that step, and
			// full verdicts would wait for it for ever (segment.go,
			// "Reuse"). The compare-and-swap failing means an expansion
			// moved the cell to holePaid first; nobody else writes it.
			storeMark(&cl.state, stHoleSeen)
			return zero, outRestart
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opSend:
			if p.m == modeSelect && st.isSel && p.sc.owns(st) {
				c.selfCollide(seg, i, st, p.sc)
				continue
			}
			if c.claimSender(seg, i, st, stTaken) { // wS → resuming → taken: the receive takes effect here
				v := cl.elem
				cl.elem = zero
				st.wakeUp(resOK)
				return v, outOK
			}
		default:
			panic("chans: corrupt cell state in receive")
		}
	}
}

// register puts the party's registration into cl in place of st (nil → wS,
// nil|inBuffer → wR): a select case's own, or for an operation that parks,
// its Handle's waiter or a pooled one. It reports false, holding nothing,
// if the cell moved on first.
func (c *Chan[T]) register(cl *cell[T], st *waiter, op uint8, p *party[T]) bool {
	if p.m == modeSelect {
		p.bindSelect()
		if !cl.state.CompareAndSwap(st, p.w) {
			return false
		}
		p.own = p.w
	} else {
		pool := &recvWaiters
		if op == opSend {
			pool = &sendWaiters
		}
		own, pooled := takeWaiter(p.w, pool)
		if !cl.state.CompareAndSwap(st, own) {
			putWaiter(own, pooled, pool)
			return false
		}
		p.own, p.pooled = own, pooled
	}
	kickPending(&c.selfPending, p.sc) // after registering: see select.go, register
	return true
}

// bindSelect points the select registration p.w at its select call and
// case, before it goes into a cell (register, rejoin).
func (p *party[T]) bindSelect() {
	p.w.sel, p.w.idx, p.w.wake = &p.sc.st, p.j, p.sc.wake
}

// giveUp moves cell i of seg from st to the cancelled state of side op
// (nil|inBuffer|w → cancelledSend or cancelledRecv), counts the cell towards
// its segment's removal, and drops a sender's value. It reports false if the
// cell had moved on from st.
func (c *Chan[T]) giveUp(seg *segment[T], i int, st *waiter, op uint8) bool {
	next := stCancelledRecv
	if op == opSend {
		next = stCancelledSend
	}
	cl := seg.cell(i)
	if !cl.state.CompareAndSwap(st, next) {
		return false
	}
	seg.cancelled(op == opSend)
	if op == opSend {
		drop(cl)
	}
	return true
}

// selfCollide handles a select case whose ticket met, in cell i of seg, the
// live registration w of another case of its own select on the same
// channel: a cell pairs the s-th send with the s-th receive, and a select
// cannot pair with itself. On a rendezvous channel with nobody else about, a
// select's send and receive tickets always meet so (the counters move in
// lockstep), so redoing the round would spin forever. Instead w is withdrawn
// (w → cancelled) and its case deferred (select.go, deferCase).
func (c *Chan[T]) selfCollide(seg *segment[T], i int, w *waiter, sc *selCall) {
	if c.giveUp(seg, i, w, w.op) { // w → cancelled; a claimer may have got there first
		sc.deferCase(w)
	}
}

// drop drops the cell's reference to a value that was not delivered.
func drop[T any](cl *cell[T]) {
	var zero T
	cl.elem = zero
}

// ===== Claims =====
//
// Whoever completes a parked operation (its partner, a buffer expansion, or
// Close) claims the registration before touching anything else (waiter.go
// describes the two kinds of registration).

// claim moves cell i of s from the registration w to next, for the party
// completing w's operation. It reports false when w was cancelled, or its
// select went with another case, or its select is still registering; the
// cell is then in the cancelled state of w's side, and the caller treats it
// as such. On success the caller owns the completion and calls w.wakeUp
// after it has finished with the cell (a receiver reads elem after waking).
// Parked senders are claimed with Chan.claimSender instead, except by Close.
func claim[T any](s *segment[T], i int, w *waiter, next *waiter) bool {
	c := s.cell(i)
	if !w.isSel {
		return c.state.CompareAndSwap(w, next) // w → next: the operation completes here
	}
	if !c.state.CompareAndSwap(w, stResuming) { // w → resuming: shut out the owner's cleanup
		return false
	}
	sched.Point()
	if selCommit(w) {
		sched.Point()
		storeMark(&c.state, next) // resuming → next
		return true
	}
	kill(s, i, w)
	return false
}

// kill ends a registration held in resuming that will not complete (another
// case won, the select was cancelled, or it will register again):
// resuming → cancelled.
func kill[T any](s *segment[T], i int, w *waiter) {
	if w.op == opSend {
		storeMark(&s.cell(i).state, stCancelledSend)
		s.cancelled(true)
	} else {
		storeMark(&s.cell(i).state, stCancelledRecv)
		s.cancelled(false)
	}
}

// failReceiver tells the receiver registered as w in cell i that the sender
// of the cell gives up (a send that found Close in its way, see
// Chan.mayDeliver): wR → cancelledRecv, and the receiver takes a new ticket.
// A select so told registers that case again: if it was parked, it is woken
// in selDirty to do so.
func failReceiver[T any](s *segment[T], i int, w *waiter) {
	c := s.cell(i)
	if !w.isSel {
		if c.state.CompareAndSwap(w, stCancelledRecv) { // wR → cancelledRecv
			s.cancelled(false)
			w.wakeUp(resRestart)
		}
		return
	}
	if !c.state.CompareAndSwap(w, stResuming) { // wR → resuming
		return
	}
	sched.Point()
	sel, wake := w.sel, w.wake // read while the cell is held: once it is released, w may be registered anew
	kicked := selClaim(sel, selDirty)
	kill(s, i, w) // resuming → cancelledRecv
	if kicked {
		sel.sleep.wake(wake)
	}
}

// claimSender claims the parked sender w for a receiver (next = taken) or a
// buffer expansion (next = buffered). It holds the cell in resuming while it
// asks mayDeliver, so that a parked send takes effect after Close only if it
// was inside the buffer when Close took effect (see asBuffered); otherwise
// the claimer fails the send as Close's walk would have, and reports false
// (the cell is then cancelledSend).
func (c *Chan[T]) claimSender(seg *segment[T], i int, w *waiter, next *waiter) bool {
	cl := seg.cell(i)
	if !cl.state.CompareAndSwap(w, stResuming) { // wS → resuming
		return false
	}
	sched.Point()
	closed := !c.mayDeliver(seg.id.Load()<<segShift | uint64(i))
	sched.Point()
	if w.isSel && !selCommit(w) {
		kill(seg, i, w)
		return false
	}
	if !closed {
		storeMark(&cl.state, next) // resuming → taken|buffered: the send takes effect
		return true
	}
	storeMark(&cl.state, stCancelledSend) // resuming → cancelledSend: the send fails after Close
	seg.cancelled(true)
	w.wakeUp(resClosed)
	return false
}

// rejoin puts the registration of the select receive case p back into the
// cell of index idx in seg, which the same case gave up when it last
// withdrew (cancelledRecv since), instead of taking a new ticket, and
// reports whether the registration is in the cell. Rendezvous channels
// only, where a cell given up has no expansion or hole to settle.
//
// Without it a select that parks on a channel nobody sends on (a quit or
// done channel) and is woken by another case gives up one more cell of that
// channel each time: its segments fill with given-up cells, are removed,
// and the first removal ends segment reuse on the channel for good.
//
// The case holds seg while it moves the cell back, so that the segment is
// in that life and is not removed meanwhile (a registration in a removed
// segment would never be found: walkers skip it); the cell then no longer
// counts as given up, so the segment is not full and cannot be removed.
//
// A first look at S gives up at once where the cell's sender has its
// ticket (a busy channel, where a fresh ticket serves as well); it decides
// nothing, since that sender may take its ticket just after it.
//
// Why the cell's sender cannot miss the registration: the case moves the
// cell cancelledRecv → wR and then loads S. If S ≤ the cell's index (so
// Close's bit is clear too), the sender of the cell takes its ticket after
// that load and loads the cell after taking it, so it finds the
// registration, as it would a fresh one; and Close, after the load, finds
// it on its walk, or the select's own look at Close (closedNow) finds
// closeAt ≤ its index. Otherwise that sender may have seen the cell given
// up and gone on to another ticket: the case gives the cell up again
// (wR → cancelledRecv), unless that sender or Close's walk claimed the
// registration first; then that claimer holds it in resuming, finds the
// select registering, marks it dirty and kills the registration (kill); the
// case waits for that, still holding the segment, and registers afresh.
//
// Why retire cannot take the segment from under the registration: retire
// (segment.go) scans the cells for final states and only then takes the
// segment if nothing references it, all while it holds reclaiming; a scan
// that read the cell as given up before the move may find the segment
// without references once the case has released it and a send has moved
// the send root on. So the case keeps the registration only if, after the
// move, it also finds no reclaim under way. A retire whose scan came
// before the move runs until after the case's release (the hold keeps the
// segment from being retired until then), so the case's load falls inside
// that reclaim and reads it under way; a retire whose scan comes after
// the move finds the registration, which is not final.
func (c *Chan[T]) rejoin(seg *segment[T], idx uint64, p *party[T]) bool {
	if c.s.Load() > idx {
		return false // the cell's sender has its ticket: a busy channel, where a fresh ticket serves
	}
	if !seg.hold(idx >> segShift) {
		return false // retired, removed, or in a later life
	}
	defer seg.release()
	seg.counts.Add(^uint64(cancelledRecvOne - 1)) // the cell no longer counts as given up (held: no removal)
	cl := seg.cell(int(idx & segMask))
	p.bindSelect()
	// After the first look: the cell's sender may take its ticket here and
	// find the cell given up.
	sched.Point()
	// cancelledRecv → wR. Only this case moves the cell out of cancelledRecv,
	// and the hold keeps its life: a store would do, but the write must go
	// through the pointer atomics (a registration), as a compare-and-swap does.
	if !cl.state.CompareAndSwap(stCancelledRecv, p.w) {
		panic("chans: a cell a select case gave up was moved on by another")
	}
	sched.Point() // registered again; the cell's sender may take its ticket here
	if c.s.Load() <= idx && !c.reclaiming.Load() {
		kickPending(&c.selfPending, p.sc) // after registering, as register does
		return true
	}
	if cl.state.CompareAndSwap(p.w, stCancelledRecv) { // wR → cancelledRecv
		seg.cancelled(false) // held: a removal waits for release
		return false
	}
	// Claimed first, by the cell's sender or Close's walk: the select is
	// registering, so that claimer kills the registration (resuming →
	// cancelledRecv, counted) rather than commit it. Wait for that while the
	// segment is held, so that no retire takes the segment while a claimer
	// still acts in it, and register afresh.
	for cl.state.Load() == stResuming {
		runtime.Gosched()
	}
	return false
}

// ===== Registrations: parking, withdrawing, collecting =====

// yieldBeforePark says how the cells of a channel of the given capacity
// made at GOMAXPROCS procs yield once before they block (await): not at
// all with more than 2 Ps (see await); on rendezvous channels and one slot
// to the back of this P's run queue (yieldLocal), where the partner just
// readied onto this P runs next and the owner stays on its P; on larger
// buffers to the global run queue (Gosched), from which the other P may
// take the owner. (Builds that block on a token channel yield with Gosched
// in both cases.) Ten alternating rounds on our 2-core VM against Gosched
// at GOMAXPROCS 1 and no yield on 0 and 1 slots at 2
// (bench/results/yieldlocal-2core-d867472): rendezvous producers and
// consumers 0.81x-0.89x the time at GOMAXPROCS 1 and 0.70x-0.89x at 2,
// one slot at 2 0.80x-0.96x, ping-pong 0.84x and 0.87x; but one producer
// and one consumer per P without work, at 2, 1.31x on a rendezvous channel
// and 1.44x on one slot. On 64 or 1024 slots at 2, yielding on this P took
// the producer/consumer rows 1.03x-1.58x the time of yielding through the
// global queue (medians of five rounds, in two builds; our reading: from
// the global queue the other P takes the owner, which finds the value a
// producer has put in the buffer since). Parking at once
// (bench/results/yield-2core-6e0c43c) beat Gosched on 0 and 1 slots at 2
// but cost ping-pong 1.30x.
func yieldBeforePark(capacity, procs int) yieldMode {
	switch {
	case procs > 2:
		return yieldNone
	case capacity >= 0 && capacity <= 1:
		return yieldHere
	}
	return yieldGlobal
}

// yieldMode is how a parking operation yields before it blocks.
type yieldMode uint8

const (
	yieldNone   yieldMode = iota
	yieldHere             // yieldLocal: to the back of this P's run queue
	yieldGlobal           // runtime.Gosched: to the global run queue
)

// park blocks the owner of the registration p.own in cell i of seg until it
// is claimed, or until done is closed and the owner withdraws first. It
// looks for Close after registering (doomed), and Close walks the cells
// after setting its bit, so one of them sees the other. A receive that was
// handed a value returns it.
func (c *Chan[T]) park(done <-chan struct{}, seg *segment[T], i int, p *party[T]) (T, outcome) {
	own := p.own
	out := c.await(done, seg, i, own, c.doomed(seg.id.Load()<<segShift|uint64(i), own))
	v := c.collect(seg, i, own, out)
	if own.op == opSend {
		putWaiter(own, p.pooled, &sendWaiters)
	} else {
		putWaiter(own, p.pooled, &recvWaiters)
	}
	return v, out
}

// await waits for the registration own to be claimed. closed says that the
// owner saw Close after registering: then it withdraws at once.
func (c *Chan[T]) await(done <-chan struct{}, seg *segment[T], i int, own *waiter, closed bool) outcome {
	if closed && c.giveUp(seg, i, own, own.op) {
		return outClosed
	}
	// Yield once before blocking (yieldBeforePark): a partner this
	// goroutine has just made runnable sits in this P's run queue; running
	// now, it finds the registration and claims it, and the owner does not
	// block at all. With more Ps, more of them are idle, and a yielding
	// owner is taken by one of them: the two goroutines of a hand-off move
	// between cores at every step (16 cores, yielding through the global
	// queue: ping-pong 2.2x-2.9x native with the yield, 1.6x without).
	// Blocking at once instead leaves the owner to be woken onto its
	// partner's P.
	switch c.yield {
	case yieldHere:
		yieldLocal()
	case yieldGlobal:
		runtime.Gosched()
	}
	if done == nil {
		own.sleep.block(own.wake) // returns at once if claimed already
		return c.result(own)
	}
	if own.sleep.blockOr(own.wake, done) {
		return c.result(own) // claimed, before or while it blocked
	}
	// done: the ticketed-sender and in-window rules: a receiver whose
	// sender has its ticket, and a sender that counts as buffered, do not
	// withdraw. Their partner is running (or, for the sender, only the
	// expansions owed by running receives stand between it and its claim),
	// so the wait is short; the operation happens although ctx is done.
	idx := seg.id.Load()<<segShift | uint64(i)
	if own.op == opSend {
		c.holesOn() // before the room check that may give the cell up
	}
	if own.op == opRecv && c.senderTicketed(idx, c.closeAt.Load()) || own.op == opSend && c.asBuffered(idx, own) {
		own.sleep.takeToken(own.wake)
		return c.result(own)
	}
	if c.giveUp(seg, i, own, own.op) {
		own.sleep.awake() // withdrawn: no claimer will wake it
		return outCancelled
	}
	own.sleep.takeToken(own.wake) // claimed as the context fired: the operation happened
	return c.result(own)
}

func (c *Chan[T]) result(w *waiter) outcome {
	switch w.res {
	case resClosed:
		return outClosed
	case resRestart:
		return outRestart
	}
	return outOK
}

// collect finishes a registration w in cell i of seg once it was resolved
// with out: a receive that was handed a value takes it from the cell; a send
// that did not deliver drops its value.
func (c *Chan[T]) collect(seg *segment[T], i int, w *waiter, out outcome) T {
	var zero T
	cl := seg.cell(i)
	if w.op == opSend {
		if out != outOK {
			drop(cl)
		}
		return zero
	}
	if out != outOK {
		return zero
	}
	v := cl.elem // the sender wrote it before its claim
	cl.elem = zero
	c.doneWith(cl) // it expanded before it parked
	return v
}

// doneWith is a receive's last action on its cell once it has the value:
// taken|done|buffered → consumed (in a buffered channel, after the implicit
// expansion it owes), so that retirement knows no party is left to act on
// the cell (segment.go, "Reuse"). A plain store: only the receive writes
// the cell from these states on.
func (c *Chan[T]) doneWith(cl *cell[T]) {
	storeMark(&cl.state, stConsumed)
}

// withdraw cancels a select case's registration w in cell i of seg
// (w → cancelled), waiting out a claimer that holds it in resuming. It
// reports false if a claimer resolved it first; a send case's value is
// dropped either way (when a claimer delivered it, the select committed to
// that case and does not withdraw it).
func (c *Chan[T]) withdraw(seg *segment[T], i int, w *waiter) bool {
	cl := seg.cell(i)
	for {
		st := cl.state.Load()
		notPoison(st)
		sched.Point()
		switch st {
		case w:
			if c.giveUp(seg, i, w, w.op) {
				return true
			}
		case stResuming:
			runtime.Gosched()
		default:
			if w.op == opSend {
				drop(cl) // a claimer killed it: cancelledSend
			}
			return false
		}
	}
}

// live reports whether the select case's registration w is still in cell i
// of seg, waiting out a claimer that holds the cell in resuming. One load
// decides, after the wait: a later one could see a new claimer's resuming.
// A registration that a claimer killed (it already counted the cancelled
// cell) is dead; a dead send case's value is dropped.
func (c *Chan[T]) live(seg *segment[T], i int, w *waiter) bool {
	cl := seg.cell(i)
	st := cl.state.Load()
	notPoison(st)
	sched.Point()
	for st == stResuming {
		runtime.Gosched()
		st = cl.state.Load()
	}
	if st == w {
		return true
	}
	if w.op == opSend {
		drop(cl)
	}
	return false
}

// ===== Buffer expansion =====

// holeFrom's marks: noHoles until the first hole may appear, holesSwitching
// while holesOn moves the channel to explicit expansions.
const (
	noHoles        = ^uint64(0)
	holesSwitching = noHoles - 1
)

// holesOn is called by a send on a buffered channel before the room check
// on which it may give its cell up: a parked send whose context fired, a
// select's send case before it may register, and Close before it reads the
// room. (A Try send takes only a ticket with room, and gives its buffered
// cell up only when Close fails it, after Close switched.) From its return on, every receive ticket
// at or past R0 (R as read here) expands explicitly, with a ticket from B.
//
// Until then B is not used: with no hole anywhere, the buffer ends exactly
// at R + capacity, so each receive ticket r expands cell r + capacity
// (expandImplicit) and needs no ticket. holesOn makes B and settled what the
// explicit expansions would have made them (B = R0 + capacity, settled = R0,
// as at a quiescent point with no holes) and publishes R0.
//
// Why no implicit expansion ever meets a hole: a send leaves a hole in cell
// s only after it found no room at a load of R that followed holesOn, so
// s ≥ R + capacity ≥ R0 + capacity, while implicit expansions target cells
// r + capacity < R0 + capacity. (Close's doomed sends are past the room
// Close read after its own holesOn, and a select's send case is past the R
// it read before registering.) So implicit expansions never extend B, and
// counting them as settled at the switch keeps the full verdicts' rule:
// an expansion is owed exactly while R > settled.
func (c *Chan[T]) holesOn() {
	if c.capacity <= 0 {
		return
	}
	for {
		h := c.holeFrom.Load()
		if h < holesSwitching {
			return // on already
		}
		c.plainCap.Store(0) // before holeFrom moves: plainlyFull stops at once
		if h == noHoles && c.holeFrom.CompareAndSwap(noHoles, holesSwitching) {
			// Receivers that load holeFrom from here on wait for the store
			// below, so those whose tickets are at or past r see it.
			sched.Point()
			r := c.r.Load()
			c.b.Store(r + uint64(c.capacity)) // B was the capacity: nobody took a ticket from it
			c.settled.Store(r)                // after B: fullCheck loads settled, then B
			c.holeFrom.Store(r)
			return
		}
		runtime.Gosched() // another send is switching
	}
}

// implicitBelow returns the receive ticket count below which expansions are
// implicit: holeFrom, once it is not switching. The caller took its tickets
// before the call.
func (c *Chan[T]) implicitBelow() uint64 {
	h := c.holeFrom.Load()
	for h == holesSwitching {
		runtime.Gosched()
		h = c.holeFrom.Load()
	}
	return h
}

// expandFor runs the buffer expansion owed by receive ticket r, whose cell
// lies in own: implicit before the first hole (holesOn), else explicit.
// pinned says that the receive's cell holds the value it took and is not
// final yet (the receive stores consumed after this call, and nobody else
// writes the cell), which keeps own and the segments after it from being
// retired (expandImplicit, expandAt). A registration does not pin: Close,
// or a claimer whose select went with another case, may cancel it.
func (c *Chan[T]) expandFor(r uint64, own *segment[T], pinned bool) {
	if c.capacity <= 0 {
		return
	}
	if r < c.implicitBelow() {
		c.expandImplicit(r+uint64(c.capacity), own, pinned)
		return
	}
	pin := uint64(noPin)
	if pinned {
		pin = r >> segShift
	}
	c.expand(pin)
}

// expandImplicit is the implicit expansion of cell b = r + capacity for
// receive ticket r, whose cell lies in own: it claims the sender parked in
// cell b, if there is one, and does nothing else (see "Buffer end": a
// sender that registers after this look finds the room in its second
// look). Without B, settled or S, and without growing the list: a segment
// not linked at the load of its predecessor's next holds no registration
// yet. recvOp makes its commonest case inline (root at b's segment, no
// sender parked in b): a change to this look changes that copy too.
//
// Segments are reused (segment.go, "Reuse"), and b's segment is not the
// segment of this receive's own cell. While that cell holds the value the
// receive took (pinned), b's segment cannot be retired: segments are
// retired in list order, and b comes after r. Otherwise (a receive that
// gave its cell up, or registered there, expands after) the expansion
// holds b's segment in its life before it looks at cell b. Where the bufSeg root does not name b's segment, a
// checked walk from own finds it (seekLinked, which holds it) and the root
// is moved along, or it would keep every segment since the buffer was last
// full alive; implicit expansions run in no particular order, so the root
// may be past b's segment already.
func (c *Chan[T]) expandImplicit(b uint64, own *segment[T], pinned bool) {
	id := b >> segShift
	seg := c.bufSeg.Load()
	held := false
	rid := seg.id.Load()
	if rid < id && seg.next.Load() == nil && seg.id.Load() == rid {
		// The root is the tail and b's segment is not linked: nobody has
		// registered in it (the common case while the buffer is not full;
		// without this look each such expansion took a hold, 17% of the
		// time of producers and consumers on 1024 slots). The id read
		// again puts seg in one life across the load of its next pointer.
		return
	}
	if rid != id || !pinned && !seg.hold(id) {
		// From the root if it is behind b's segment (it may be in a
		// later life by now: seekLinked checks), else from own.
		from := seg
		if rid >= id {
			from = own
		}
		var sid uint64
		if seg, sid = c.seekLinked(from, id); seg == nil {
			return // given up or retired: no sender parked there
		}
		c.moveForward(&c.bufSeg, seg, sid) // fails only if seg was removed; the hold keeps it in its life
		if sid != id {
			seg.release()
			return // b's segment is not linked: nobody has registered in it
		}
		held = true
	} else if !pinned {
		held = true
	}
	if held {
		defer seg.release()
	}
	if seg.sendRegs.Load() == 0 {
		// No send has registered in b's segment in this life; one that does
		// later finds the room on its second look ("Buffer end").
		return
	}
	i := int(b & segMask)
	st := seg.cell(i).state.Load()
	notPoison(st)
	sched.Point()
	if isWaiter(st) && st.op == opSend && c.claimSender(seg, i, st, stBuffered) { // wS → resuming → buffered: the parked send takes effect
		st.wakeUp(resOK)
	}
}

// seekLinked walks from start towards the segment with the given id without
// growing the list, and returns the segment it reached and its id, held in
// that life (the caller releases it): the one with that id, or the tail if
// that one is not linked yet; or nil if it was given up or retired. start
// is the bufSeg root as loaded, or the segment of the caller's own cell,
// which may be final (a receive that gave its cell up expands after); either
// may have been retired and reused since, so the walk checks its hops as
// findSeg does, and starts again from the cursor when a hop fails or start
// is in a later life.
func (c *Chan[T]) seekLinked(start *segment[T], id uint64) (*segment[T], uint64) {
	cur, cid := start, start.id.Load()
	checked := false
	for {
		if cid == retiredID || cid > id && !checked {
			if cid == retiredID {
				runtime.Gosched() // retired under the walk, or a grow has not stored the id yet
			}
			cur, cid = c.cursorSeg()
			checked = true
			continue
		}
		if cid > id {
			return nil, 0 // given up or retired
		}
		next := cur.next.Load()
		if cid == id || next == nil {
			if cur.hold(cid) {
				return cur, cid
			}
			if cur.id.Load() == cid {
				// Removed (every cell given up; the tail never is), or
				// retiring: no sender is parked there.
				return nil, 0
			}
			cid = retiredID
			continue
		}
		if nid, ok := hop(cur, cid, next); ok {
			cur, cid, checked = next, nid, true
		} else {
			cid = retiredID
		}
	}
}

// expand runs one buffer expansion (seed 000's expandBuffer): it makes the
// next cell past the buffer part of it, restarting while that cell belongs
// to a sender that gave up, and counts itself in settled when done (fullCheck).
// pin is the id of the segment of the caller's own cell while that cell
// holds the value the receive took, not yet consumed, which keeps that
// segment and every later one from being retired (noPin otherwise, and for
// a registration, which others may cancel): expandAt holds only a segment
// before it.
func (c *Chan[T]) expand(pin uint64) {
	if c.capacity <= 0 {
		return
	}
	for {
		seg := c.bufSeg.Load()
		b := c.b.Add(1) - 1
		sched.Point()
		done := c.nothingToExpand(seg, b)
		if !done {
			_, done = c.expandAt(seg, b, pin)
		}
		if done {
			c.settled.Add(1) // after the cell's transition: full reads this first
			return
		}
	}
}

// nothingToExpand is expandAt's first case where it has nothing to do, the
// common one, small enough to inline: the sender of cell b has not reached
// its room check (it has no ticket yet, or b's segment is not linked yet),
// so it will find b in the buffer, and the bufSeg root seg has nowhere to
// move (it is at b's segment or past it, or at the tail).
func (c *Chan[T]) nothingToExpand(seg *segment[T], b uint64) bool {
	if seg.next.Load() == nil {
		// seg is the tail: the root has nowhere to move. If b's segment is
		// not linked yet, its sender has not reached its room check,
		// which comes after the walk that links the segment and loads B
		// and R after this expansion's ticket: it finds b in the buffer.
		// Then S, a line that every send writes, need not be read.
		return seg.id.Load() < b>>segShift || b >= c.s.Load()&counterMask
	}
	return b >= c.s.Load()&counterMask && seg.id.Load() >= b>>segShift
}

// expandN runs the k expansions of k receive tickets, taking k expansion
// tickets with one fetch-and-add; an expansion whose ticket met a hole takes
// another, one at a time (expand). Each counts itself in settled when done.
func (c *Chan[T]) expandN(k uint64) {
	if c.capacity <= 0 || k == 0 {
		return
	}
	seg := c.bufSeg.Load()
	b := c.b.Add(k) - k
	sched.Point()
	var redo uint64
	for j := range k {
		var done bool
		if seg, done = c.expandAt(seg, b+j, noPin); !done {
			redo++
		}
	}
	c.settled.Add(k - redo)
	for ; redo > 0; redo-- {
		c.expand(noPin)
	}
}

// noPin is expand's and expandAt's pin where the caller's own cell is final
// (or, for a batch, its cells are): nothing keeps b's segment from retiring.
const noPin = ^uint64(0)

// expandAt is one expansion with ticket b, from seg (read from bufSeg before
// the ticket was taken). It returns the segment its walk reached, for the
// next expansion of a batch, and reports false where cell b was a hole that
// the expansion makes good by taking another ticket. pin is as for expand.
func (c *Chan[T]) expandAt(seg *segment[T], b uint64, pin uint64) (*segment[T], bool) {
	id := b >> segShift
	if b >= c.s.Load()&counterMask {
		// The sender of cell b has no ticket yet; it will find b < B.
		// Still move the root along, as far as the list reaches, or it
		// would keep every segment since the buffer was last full alive.
		if seg.id.Load() < id {
			seg = c.advanceBufSeg(seg, id)
		}
		return seg, true
	}
	if seg.id.Load() != id {
		var sid uint64
		if seg, sid = c.findAndMove(&c.bufSeg, seg, id); sid != id {
			// Segment removed: in a buffered channel only cells given up
			// by receivers count towards removal, and expansion is done
			// for those. Or retired: see below.
			return seg, true
		}
	}
	// Cell b is not, as a rule, this expansion's receive's own: its sender
	// may have found room below R + capacity and its receiver taken the
	// value, so that every cell of the segment is final, the segment
	// retired and reused, with a cell of a later life where b's was. The
	// receive's own cell, while it holds the value taken, keeps its segment
	// (pin) and every later one from retiring: segments are retired in list
	// order. Before pin, hold
	// the segment in b's life before looking at the cell (segment.go,
	// "Reuse"). A hold fails only once the segment is retired, or
	// removable (every cell given up); then every cell is final, and cell
	// b is consumed, holeSeen (its receiver made the hole good) or
	// cancelledRecv, where this expansion would have nothing to do.
	held := id < pin
	if held {
		sched.Point() // every party may finish with the segment here, and reclaim reuse it
		if !seg.hold(id) {
			return seg, true
		}
	}
	done := c.expandCell(seg, int(b&segMask))
	if held {
		seg.release()
	}
	return seg, done
}

// settle counts a receive ticket that owes no expansion: its cell was a hole
// that an expansion had already made good (fullCheck).
func (c *Chan[T]) settle() {
	if c.capacity > 0 {
		c.settled.Add(1)
	}
}

// advanceBufSeg moves the bufSeg root from seg towards the segment with the
// given id, without growing the list, and returns the segment it reached (seg
// if none).
func (c *Chan[T]) advanceBufSeg(seg *segment[T], id uint64) *segment[T] {
	cur := seg
	for cur.id.Load() < id {
		n := cur.next.Load()
		if n == nil {
			break
		}
		cur = n
	}
	for cur != seg && !c.moveForward(&c.bufSeg, cur, cur.id.Load()) {
		cur = cur.next.Load() // cur was removed; its successor is not, or is the tail
		if cur == nil {
			return seg
		}
	}
	return cur
}

// expandCell is the expansion's step in cell i of seg. It reports false
// where the cell was a hole this expansion makes good by taking another
// ticket.
func (c *Chan[T]) expandCell(seg *segment[T], i int) bool {
	cl := seg.cell(i)
	for {
		st := cl.state.Load()
		notPoison(st)
		sched.Point()
		switch {
		case st == nil:
			if casMark(&cl.state, nil, stInBuffer) { // nil → inBuffer: the coming sender will not park
				return true
			}
		case st == stCancelledSend:
			// cancelledSend → holePaid: this expansion makes good the hole
			// by taking another ticket, unless the cell's receiver did first
			// (cancelledSend → holeSeen).
			if casMark(&cl.state, stCancelledSend, stHolePaid) {
				return false
			}
		case st == stHoleSeen:
			return true // the cell's receiver made it good with an expansion of its own
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opSend:
			if c.claimSender(seg, i, st, stBuffered) { // wS → resuming → buffered: the parked send takes effect
				st.wakeUp(resOK)
				return true
			}
		default: // buffered, done, taken, inBuffer, wR, cancelledRecv: the cell is in the buffer already
			return true
		}
	}
}
