package chans

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/scalable-go/chans/internal/sched"
)

// A waiter is the registration of a parked operation in a cell. A plain
// operation registers the waiter owned by its Handle (or one from sendWaiters
// or recvWaiters);
// a select registers one waiter per case, all sharing the select's wake
// channel and state word.
//
// Claiming. Whoever completes a parked operation (its partner, buffer
// expansion, or Close) claims the registration before touching anything else:
//   - plain waiter: one CompareAndSwap of the cell from the waiter to the
//     next state. The owner cancels with the same CompareAndSwap (waiter →
//     cancelled), so exactly one of them wins.
//   - select registration: the cell goes from the waiter to resuming (which
//     shuts out the owner's cleanup and every other claimer), then the
//     select's state word from selWaiting to the case's index; on success the
//     cell goes to the next state, on failure (another case won, or the
//     select was cancelled) to cancelled, and the claimer treats the cell as
//     cancelled.
//
// The winner writes res and then wakes the owner: a plain owner through
// the waiter's sleep, a select through its call's (selState.sleep), in the
// same way. The owner first tells its winner whether it will block
// (sleep.go): the winner finds the owner not blocked yet and wakes nothing,
// or finds it blocked on wake (waiting for a context too) and sends one
// token, or finds it parked in the runtime and readies it. So a claim that comes before the
// owner blocks (a partner run by the owner's yield, or on another core while
// the owner yields) costs no wake-up. The owner consumes each token before
// it reuses the waiter, also when it lost a cancellation race, so the buffer
// of wake is empty whenever a waiter is registered, and puts sleep back to
// awake.
//
// Reuse. A waiter's op and sel never change. A registration stays in its cell until it is claimed or cancelled,
// and a waiter is registered in at most one cell per case at a time, so a
// CompareAndSwap that finds the waiter in a cell has found its current
// registration: a stale load of the pointer can only lead to a failed
// CompareAndSwap. A select's receive case may put its waiter back into the
// very cell it gave up (rejoin, bounded.go); the only goroutines that can
// hold a stale load of it there are the cell's sender and Close's walk, and
// each moved S past the cell or set Close's bit before loading it, which
// rejoin looks for after the move: it then gives the cell up again.
type waiter struct {
	op    uint8 // opSend or opRecv, fixed at creation; 0 for the markers of bounded.go
	isSel bool  // a select case's registration, fixed at creation
	res   uint8 // outcome, written by the claimer before the wake token
	// Select registrations only: set by the owner before each registration
	// and read by claimers only after their CompareAndSwap found the
	// registration in its cell.
	idx  int32
	sel  *selState
	wake chan struct{} // capacity 1; a select's cases share their call's
	// busy is set while a Handle's waiter is taken for one parking
	// (takeWaiter), so that two goroutines sharing the Handle never park on
	// it at once.
	busy atomic.Bool
	// sleep (plain waiters): whether the owner has blocked, and how; see
	// Claiming and sleep.go.
	sleep sleeper
}

const (
	opSend = 1
	opRecv = 2
)

// Outcomes of a parked operation.
const (
	resOK      = 1 // delivered (send) or value in the cell (receive)
	resClosed  = 2 // woken by Close: nothing delivered or taken
	resRestart = 3 // receiver: the sender of this cell gave up after Close; take a new ticket
)

func newWaiter(op uint8) *waiter {
	lw := &lineWaiter{waiter: waiter{op: op, wake: make(chan struct{}, 1)}}
	return &lw.waiter
}

// lineWaiter gives a plain waiter (pooled, or a Handle's) cache lines of
// its own. Waiters are small, and the ones made one after another lie next
// to each other; yet each serves its own goroutine, and its owner and
// claimer write it at every parking (busy, sleep, res). Two on one line
// would make the parkings of two unrelated goroutines, on different cores,
// stall each other. A select case's waiter, made with its case, stays
// unpadded: a select over cases built for each call would pay for the
// padding at every call.
type lineWaiter struct {
	waiter
	_ [(cacheLine - unsafe.Sizeof(waiter{})%cacheLine) % cacheLine]byte
}

// Pools of plain waiters for operations that come without a Handle. A waiter
// keeps its op for life: a goroutine holding a stale pointer to it may read
// op at any time, so op must never be written after the waiter is shared.
var (
	sendWaiters = sync.Pool{New: func() any { return newWaiter(opSend) }}
	recvWaiters = sync.Pool{New: func() any { return newWaiter(opRecv) }}
)

// takeWaiter returns the waiter a plain operation registers to park: h,
// its Handle's, unless h is nil or another goroutine sharing the Handle is
// parked on it; then one from pool (pooled true).
func takeWaiter(h *waiter, pool *sync.Pool) (w *waiter, pooled bool) {
	if h != nil && h.busy.CompareAndSwap(false, true) { // free → taken by this operation
		return h, false
	}
	return pool.Get().(*waiter), true
}

// putWaiter gives back a waiter from takeWaiter once its wake token, if any,
// has been consumed.
func putWaiter(w *waiter, pooled bool, pool *sync.Pool) {
	if pooled {
		pool.Put(w)
	} else {
		w.busy.Store(false)
	}
}

// selState is the state word a select's registrations share. See select.go
// for its state machine.
type selState struct {
	state atomic.Int32 // selReg, selDirty, selWaiting, selCancelled, or 1 + the winning case
	// sleep: whether the parked select has blocked, and how (sleep.go).
	// Each claimer that moves state out of selWaiting wakes it, once.
	sleep sleeper
}

const (
	selReg       = 0  // registering: only the select itself may commit
	selDirty     = -3 // registering, and a claimer found a registration it may not complete
	selWaiting   = -2 // parked: the first claimer commits it
	selCancelled = -1 // the select gave up (context done)
)

// isWaiter reports whether a cell state is a registration rather than a marker.
func isWaiter(st *waiter) bool { return st != nil && st.op != 0 }

// selCommit commits w's select to w's case. The caller holds w's cell in
// resuming, so the registration is live and w.sel and w.idx belong to the
// current select call.
func selCommit(w *waiter) bool { return selClaim(w.sel, 1+w.idx) }

// selClaim is a claimer's step on a select's state word: a parked select
// (selWaiting) moves to 'to' (1 + a case, to commit it; selDirty, to wake it
// to register again), and selClaim reports true. A select that is still
// registering may not be committed by others (its own registration may yet
// have to commit it): it is marked selDirty, so that it registers the
// claimed case again, and selClaim reports false; so it does for a select
// already committed or cancelled.
func selClaim(s *selState, to int32) bool {
	for {
		st := s.state.Load()
		sched.Point()
		switch st {
		case selWaiting:
			if s.state.CompareAndSwap(selWaiting, to) {
				return true
			}
		case selReg:
			if s.state.CompareAndSwap(selReg, selDirty) {
				return false
			}
		default:
			return false
		}
	}
}

// wakeUp hands the outcome to the owner of a claimed registration.
func (w *waiter) wakeUp(res uint8) {
	w.res = res
	sched.Point() // the owner may commit to block here, or take res
	if w.isSel {
		w.sel.sleep.wake(w.wake) // the select's, shared by its cases
		return
	}
	w.sleep.wake(w.wake)
}
