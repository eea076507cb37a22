package chans

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/scalable-go/chans/internal/sched"
)

// Select waits on several channel operations at once and commits exactly one.
//
// A select runs in passes (seed 004), over its cases in a fresh random order:
//
//  1. Poll. Read each case's counters; try, without blocking, each case they
//     show ready. The first that succeeds commits. A non-blocking select
//     reads the counters once more: all counters only grow, so two equal
//     collects mean they held those values at every instant between, and
//     then no case was ready at that instant (a double collect).
//  2. Register. Take a ticket on each case's channel (a receive case on a
//     rendezvous channel first tries to take back the cell it gave up at its
//     last withdrawal: rejoin, in bounded.go). A cell that completes
//     at once (a value buffered, a partner parked, room in the buffer, the
//     channel closed) commits the select to that case; otherwise the case's
//     registration (a waiter with isSel) goes into the cell, exactly as a
//     parked plain operation would.
//  3. Park, until a claimer commits the select to one of its cases or the
//     context is done.
//  4. Clean up: withdraw every other registration (its cell becomes
//     cancelled, so the select's losing cases cost the channel no more than a
//     cancelled operation) and run the winner's callback.
//
// The select's state word (selState) goes:
//
//	selReg ──(claimer)──> selDirty ──(select re-registers dead cases)──> selReg
//	selReg ──(select, a cell completed during registration)──> 1+j
//	selReg ──(select, registration done)──> selWaiting
//	selWaiting ──(first claimer, claim in waiter.go)──> 1+j
//	selWaiting ──(select, context done)──> selCancelled
//	selWaiting ──(failReceiver: a send gave up after Close)──> selDirty, and
//	           the select wakes, registers the dead cases again and parks
//	selWaiting ──(select, an OnDone channel closed or its timer fired)──> 1+j
//	selDirty ──(select, an OnDone or OnTimeout case ready)──> 1+j
//
// OnDone and OnTimeout cases (select_time.go) register nowhere: the select
// itself waits on their channels beside its wake channel and the context's,
// and commits itself to such a case with the same CompareAndSwap from
// selWaiting that the context path uses to give up. If that fails, a
// claimer won (or kicked the select) first, and the select takes the wake
// token as usual.
//
// Only the select itself leaves selReg and selDirty, so its own commit during
// registration never fails and it never has to give back a value it has
// taken. A claimer that meets a registering select does not wait for it (two
// selects registering on the same two channels in opposite orders would wait
// for each other forever): it kills the registration (the cell becomes
// cancelled, the claimer takes a new ticket) and marks the select dirty; the
// select registers that case again before it parks.
//
// Linearization: a committed case takes effect where the plain operation of
// its kind would (bounded.go); a select that returns nothing (TrySelect, or a
// context done before any case) at the instant of its double collect, or of
// its move to selCancelled; an OnDone or OnTimeout case that commits, at the
// poll that found it ready, or the select's own move to 1+j.

// Case is one operation of a select, made by OnRecv, OnSend, OnSendPtr,
// OnDone or OnTimeout. A Case may be used by one select at a time, and again
// later; it must not appear twice in one call.
type Case struct {
	k   selCase
	sig bool // an OnDone or OnTimeout case: see select_time.go
}

type selCase interface {
	// snapshot appends the channel's counters to dst and reports whether
	// they show the case ready.
	snapshot(dst []uint64) ([]uint64, bool)
	try() bool                        // complete without waiting, if possible
	register(sc *selCall, j int) bool // true: completed, and committed the select to j
	registered() bool                 // has a registration that was live when last checked
	waiter() *waiter                  // its registration
	refresh()                         // forget the registration if a claimer killed it
	closedNow() bool                  // the registered cell can no longer complete
	withdraw() bool                   // cancel the registration; false if a claimer resolved it
	setClosed()                       // record a closed result
	collect()                         // take the result a claimer left
	complete()                        // run the callback
	deferred() bool                   // waits, unregistered, for a kick (selfPending)
	setDeferred(bool)
	publish(sc *selCall) // name sc in the channel's selfPending
	unpublish(sc *selCall)
	reg() *caseReg // nil for OnDone and OnTimeout cases
}

// OnRecv returns a case that receives from c and passes the value to f (ok
// is false if c is closed and drained). f may be nil. A nil c is never ready.
func OnRecv[T any](c *Chan[T], f func(v T, ok bool)) Case {
	if c == nil {
		return Case{}
	}
	c.mustBeMade()
	if c.rb != nil {
		return Case{k: &ringRecvCase[T]{c: c, recvOutcome: recvOutcome[T]{f: f}, caseReg: newCaseReg(opRecv, &c.selfPending)}}
	}
	return Case{k: &recvCase[T]{c: c, recvOutcome: recvOutcome[T]{f: f}, caseReg: newCaseReg(opRecv, &c.selfPending)}}
}

// OnSend returns a case that sends v on c and passes the outcome to f (nil or
// ErrClosed). f may be nil. A nil c is never ready.
func OnSend[T any](c *Chan[T], v T, f func(err error)) Case {
	if c == nil {
		return Case{}
	}
	c.mustBeMade()
	if c.rb != nil {
		sc := &ringSendCase[T]{c: c, sendOutcome: sendOutcome[T]{v: v, f: f}, caseReg: newCaseReg(opSend, &c.selfPending)}
		sc.p = &sc.v
		return Case{k: sc}
	}
	sc := &sendCase[T]{c: c, sendOutcome: sendOutcome[T]{v: v, f: f}, caseReg: newCaseReg(opSend, &c.selfPending)}
	sc.p = &sc.v
	return Case{k: sc}
}

// OnSendPtr returns a case that sends *p on c and passes the outcome to f
// (nil or ErrClosed), so that a case built once, in a Selector, can send a
// different value on each call: set *p before the call. f may be nil, and
// may set *p for the next call. A nil c is never ready; a nil p panics.
//
// The value sent is the one *p holds when a call that holds the case
// starts: p must not be written while such a call runs, except by the
// callbacks it runs. A send the case commits takes effect as a Send of that
// value would.
func OnSendPtr[T any](c *Chan[T], p *T, f func(err error)) Case {
	if p == nil {
		panic("chans: OnSendPtr with a nil pointer")
	}
	if c == nil {
		return Case{}
	}
	c.mustBeMade()
	if c.rb != nil {
		return Case{k: &ringSendCase[T]{c: c, sendOutcome: sendOutcome[T]{p: p, f: f}, caseReg: newCaseReg(opSend, &c.selfPending)}}
	}
	return Case{k: &sendCase[T]{c: c, sendOutcome: sendOutcome[T]{p: p, f: f}, caseReg: newCaseReg(opSend, &c.selfPending)}}
}

// Select blocks until one case commits, runs its callback and returns its
// index. Among cases ready at once, each is chosen with equal probability.
// With no non-nil case it blocks forever, like an empty select statement.
// Called again and again over the same case list, it costs what a
// Selector's Select costs: the list keeps the call's state between calls.
func Select(cases ...Case) int {
	j, _ := selectPooled(context.Background(), cases, true)
	return j
}

// SelectContext is Select that gives up when ctx is done, returning
// (-1, ctx.Err()); then no case took effect. If ctx is already done it does
// not block: it commits a ready case if there is one.
func SelectContext(ctx context.Context, cases ...Case) (int, error) {
	if ctx == nil {
		panic("chans: nil Context")
	}
	return selectPooled(ctx, cases, true)
}

// TrySelect commits a ready case, runs its callback and returns (index,
// true); it returns (-1, false) without blocking if there was an instant at
// which no case was ready.
func TrySelect(cases ...Case) (int, bool) {
	j, _ := selectPooled(context.Background(), cases, false)
	return j, j >= 0
}

// Selector is a reusable select over a fixed list of cases, any of which can
// be disabled and enabled again between calls. Its methods allocate nothing
// once it has run once. A Selector is used by one goroutine at a time.
type Selector struct {
	all   []Case   // as given to NewSelector
	cases []Case   // all, with the disabled cases zero (never ready)
	sc    *selCall // its own allocation, on lines of its own (see selCall)
}

// NewSelector returns a Selector over cases, with every case enabled. It
// keeps a copy of the list: changing cases afterwards does not change s.
func NewSelector(cases ...Case) *Selector {
	return &Selector{all: slices.Clone(cases), cases: slices.Clone(cases), sc: newSelCall()}
}

// Disable makes case j (its index in the list given to NewSelector) never
// ready, as a nil channel is in a select statement, until Enable(j): a
// disabled case takes and delivers nothing and its callback does not run.
// Disabling a disabled case does nothing. It may be called between calls of
// s, or from a callback s runs. It takes effect at s's next call.
func (s *Selector) Disable(j int) {
	_ = s.all[j] // an index out of range panics
	s.cases[j] = Case{}
}

// Enable makes case j of s take part again after Disable(j). Enabling an
// enabled case does nothing. It may be called between calls of s, or from
// a callback s runs. It takes effect at s's next call.
func (s *Selector) Enable(j int) { s.cases[j] = s.all[j] }

// Select is the package's Select over s's cases.
func (s *Selector) Select() int {
	j, _ := s.sc.run(context.Background(), s.cases, true, nil, false)
	return j
}

// SelectContext is the package's SelectContext over s's cases.
func (s *Selector) SelectContext(ctx context.Context) (int, error) {
	if ctx == nil {
		panic("chans: nil Context")
	}
	return s.sc.run(ctx, s.cases, true, nil, false)
}

// TrySelect is the package's TrySelect over s's cases.
func (s *Selector) TrySelect() (int, bool) {
	j, _ := s.sc.run(context.Background(), s.cases, false, nil, false)
	return j, j >= 0
}

// selCall is the per-call state of a select: reused across calls, never
// shared by two calls at once. Every call writes it (order, rng, cases), so
// it fills whole cache lines (cacheLine), and so do the slices it writes
// into (init): small objects made one after another lie side by side, and
// a select loop whose state shares a line with what another goroutine
// writes (its counters, what its callbacks received) waits for that line
// at every call. The allocator puts an object whose size is a multiple of
// cacheLine on a line boundary only while it needs no header, up to 512
// bytes for an object with pointers; TestLineSizedState checks it.
type selCall struct {
	callState
	_ [(cacheLine - unsafe.Sizeof(callState{})%cacheLine) % cacheLine]byte
}

// callState is selCall's content.
type callState struct {
	st    selState
	wake  chan struct{}
	cases []Case // of the current call
	order []int
	snap  []uint64
	snap2 []uint64
	rng   uint64 // the state of randn, seeded at each call
	// deferred: some case was deferred in this call (deferCase), so that
	// finish has to look for it.
	deferred bool
	selSignals
}

var selCalls = sync.Pool{New: func() any { return newSelCall() }}

func newSelCall() *selCall {
	sc := new(selCall)
	sc.init()
	return sc
}

// selectPooled is a package-level select: its call state comes from the
// list's lead case or the pool (selCallFor), and run gives it back.
func selectPooled(ctx context.Context, cases []Case, block bool) (int, error) {
	sc, lead := selCallFor(cases)
	return sc.run(ctx, cases, block, lead, true)
}

// selCallFor returns the state for a package-level select over cases, and
// the registration of its lead case, its first channel case: the state that
// case keeps if it has led a call before, else one from the pool. A loop
// that selects over the same list again and again then uses one state, as
// a Selector does, without the pool's cost. A Case is in one call at a time,
// so the state it keeps is never used by two calls at once.
func selCallFor(cases []Case) (*selCall, *caseReg) {
	for i := range cases {
		if k := cases[i].k; k != nil {
			if r := k.reg(); r != nil {
				if sc := r.kept; sc != nil {
					r.kept = nil
					return sc, r
				}
				return selCalls.Get().(*selCall), r
			}
		}
	}
	return selCalls.Get().(*selCall), nil
}

// doneWith gives back the state of a call that selCallFor returned: the lead
// case keeps it if this was its second call or later (a case used once, as
// in a select over cases built for it, never takes a state out of the pool
// for good), else it goes back to the pool.
func doneWith(sc *selCall, lead *caseReg) {
	switch {
	case lead == nil:
	case lead.used:
		lead.kept = sc
		return
	default:
		lead.used = true
	}
	selCalls.Put(sc)
}

func (sc *selCall) init() {
	sc.wake = make(chan struct{}, 1)
	sc.rng = rand.Uint64()
	// A cache line each for the slices a call writes into (see selCall); a
	// select over more cases grows them by doubling, to sizes that keep
	// them on lines of their own.
	const words = cacheLine / 8
	sc.order = make([]int, 0, words)
	sc.snap = make([]uint64, 0, words)
	sc.snap2 = make([]uint64, 0, words)
}

// owns reports whether the registration w belongs to one of sc's cases.
func (sc *selCall) owns(w *waiter) bool {
	for _, j := range sc.order {
		if sc.cases[j].k.waiter() == w {
			return true
		}
	}
	return false
}

// kick asks the select using sc to register its cases again: a registering
// select finds itself dirty; a parked one is woken in selDirty. sc may be
// stale (reused by a later call): then the kick costs that call a round.
func kick(sc *selCall) {
	if selClaim(&sc.st, selDirty) {
		sc.st.sleep.wake(sc.wake)
	}
}

// kickPending kicks the select parked with a deferred case on the channel
// whose selfPending slot is p, unless that is the caller's own select.
func kickPending(p *atomic.Pointer[selCall], self *selCall) {
	if sc := p.Load(); sc != nil && sc != self {
		kick(sc)
	}
}

// commit is the select's own commit to case j during registration.
func (sc *selCall) commit(j int) {
	for {
		s := sc.st.state.Load() // selReg or selDirty: only this goroutine leaves them
		sched.Point()
		if sc.st.state.CompareAndSwap(s, int32(1+j)) {
			return
		}
	}
}

// randn returns a random int in [0, n), n > 0, from a wyrand generator
// seeded from math/rand/v2 when sc was made (init) and carried from call to
// call: cheap enough to run once per case of a select over a thousand
// channels.
func (sc *selCall) randn(n int) int {
	sc.rng += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(sc.rng, sc.rng^0xe7037ed1a0b428db)
	hi, _ = bits.Mul64(hi^lo, uint64(n))
	return int(hi)
}

// shuffle sets sc.order to a random permutation of the non-nil cases, and
// sc.sigs to the OnDone and OnTimeout cases among them, in index order.
func (sc *selCall) shuffle(cases []Case) {
	sc.order = sc.order[:0]
	sc.sigs = sc.sigs[:0]
	for j := range cases {
		if cases[j].k == nil {
			continue
		}
		if cases[j].sig {
			sc.sigs = append(sc.sigs, j)
		}
		sc.order = append(sc.order, j)
		if n := len(sc.order); n > 1 {
			k := sc.randn(n)
			sc.order[n-1], sc.order[k] = sc.order[k], sc.order[n-1]
		}
	}
}

// run is the select over cases; ctx is context.Background() for Select and
// TrySelect (its Done channel is nil, and its Err is always nil). For a
// package-level select (pooled), sc came from selCallFor with the list's
// lead case, and run gives it back (doneWith). The winner's callback runs
// once the call's state is cleared and given back, and touches nothing of
// it, so that the callback may change the case list (Selector.Disable),
// select again, or hand the list to another goroutine that selects over it
// while this call is still in the callback.
func (sc *selCall) run(ctx context.Context, cases []Case, block bool, lead *caseReg, pooled bool) (int, error) {
	j, err := sc.sel(ctx, cases, block)
	sc.finish()
	if pooled {
		doneWith(sc, lead)
	}
	if j >= 0 {
		cases[j].k.complete()
	}
	return j, err
}

// sel runs the passes of one call and returns the case it committed, or -1
// and the context's error.
func (sc *selCall) sel(ctx context.Context, cases []Case, block bool) (int, error) {
	if ctx.Err() != nil {
		block = false
	}
	sc.shuffle(cases)
	sc.cases = cases
	if block && len(sc.sigs) > 0 {
		sc.arm(cases) // an OnTimeout case's timer starts with the call
	}
	if len(sc.order) == 0 {
		if !block {
			return -1, ctx.Err()
		}
		<-ctx.Done() // nil without a context: blocks forever, as select {} does
		return -1, ctx.Err()
	}

	// Pass 1: poll. A blocking select tries each case in the random order
	// and takes the first that commits: each try looks before it writes,
	// so a case that is not ready costs what its snapshot would.
	if block {
		for _, j := range sc.order {
			if cases[j].k.try() {
				return j, nil
			}
		}
	}
	for !block {
		sc.snap = sc.snap[:0]
		someReady := false
		for _, j := range sc.order {
			var ready bool
			sc.snap, ready = cases[j].k.snapshot(sc.snap)
			someReady = someReady || ready
		}
		if someReady {
			for _, j := range sc.order {
				if cases[j].k.try() {
					return j, nil
				}
			}
		} else {
			sc.snap2 = sc.snap2[:0]
			for _, j := range sc.order {
				sc.snap2, _ = cases[j].k.snapshot(sc.snap2)
			}
			if equal(sc.snap, sc.snap2) {
				return -1, ctx.Err()
			}
		}
	}

	// Pass 2: register.
	done := ctx.Done() // not before: most selects end in pass 1
	sc.st.state.Store(selReg)
	win := sc.register(cases, done)
	if win == -2 {
		return -1, ctx.Err()
	}

	// Pass 3: park.
	for win < 0 {
		switch ev := sc.park(done); ev {
		case evWake:
		case evCtx:
			sched.Point()
			if sc.st.state.CompareAndSwap(selWaiting, selCancelled) {
				sc.st.sleep.awake() // no claimer will wake it
				sc.withdrawAll(cases)
				return -1, ctx.Err()
			}
			sc.st.sleep.takeToken(sc.wake) // committed, or kicked, as the context fired
		default: // ev is an OnDone case whose channel is closed, or the OnTimeout case whose timer fired
			sched.Point()
			if sc.st.state.CompareAndSwap(selWaiting, int32(1+ev)) {
				sc.st.sleep.awake() // no claimer will wake it
				sc.withdrawAll(cases)
				return ev, nil
			}
			sc.st.sleep.takeToken(sc.wake) // committed, or kicked, as the signal came
		}
		if st := sc.st.state.Load(); st > 0 {
			win = int(st) - 1
			cases[win].k.collect()
			break
		}
		// Kicked (selDirty): a sender that found Close in its way killed a
		// registration (failReceiver), or an operation about to park on a
		// channel where a case of this select was deferred kicked it.
		// Register the dead and deferred cases again; with a done context,
		// give up instead, and with an OnDone or OnTimeout case ready,
		// commit to it.
		if ctx.Err() != nil {
			sc.st.state.Store(selCancelled) // only this goroutine leaves selDirty
			sc.withdrawAll(cases)
			return -1, ctx.Err()
		}
		if j := sc.signalReady(); j >= 0 {
			sc.st.state.Store(int32(1 + j)) // only this goroutine leaves selDirty
			sc.withdrawAll(cases)
			return j, nil
		}
		sc.st.state.Store(selReg)
		sc.retry(cases)
		if win = sc.register(cases, done); win == -2 {
			return -1, ctx.Err()
		}
	}

	// Pass 4: clean up; run calls the winner's callback.
	for _, j := range sc.order {
		if j != win {
			cases[j].k.withdraw()
		}
	}
	return win, nil
}

// withdrawAll withdraws every registration of the call.
func (sc *selCall) withdrawAll(cases []Case) {
	for _, j := range sc.order {
		cases[j].k.withdraw()
	}
}

// finish drops the call's cases, takes sc out of any selfPending slot and
// stops the call's timer.
func (sc *selCall) finish() {
	if sc.deferred {
		for _, j := range sc.order {
			k := sc.cases[j].k
			if k.deferred() {
				k.unpublish(sc)
				k.setDeferred(false)
			}
		}
		sc.deferred = false
	}
	sc.cases = nil
	sc.disarm()
}

// register runs pass 2: it registers every case that has no live
// registration, and returns the case the select committed itself to, or -1
// once it is in selWaiting, or -2 if done was closed while a round of
// registration had to be redone (the select is then in selCancelled and
// holds no registration). A round that has to be redone may also find an
// OnDone or OnTimeout case ready and commit to it, withdrawing the rest.
//
// A round is redone when a claimer killed a registration. Two selects
// registering on the same channels can kill each other's registrations; so
// can one select with a send and a receive case on the same channel, whose
// tickets then meet in one cell while nobody else moves the counters (a cell
// pairs the s-th send with the s-th receive, and a select cannot pair with
// itself). Each redone round first yields, so that other goroutines, whose
// operations end either contest, run; a select that nothing can ever match
// thus waits by yielding rather than parking.
func (sc *selCall) register(cases []Case, done <-chan struct{}) int {
	for {
		for _, j := range sc.order {
			k := cases[j].k
			if k.registered() || k.deferred() {
				continue
			}
			if k.register(sc, j) {
				return j
			}
		}
		// A case whose registration its own other case took over waits for
		// a kick: name this select where operations that park will see it.
		// Such an operation registers before it looks at selfPending, and
		// the select publishes before it gives each deferred case one more
		// try; so either the operation kicks the select, or that try,
		// which walks forward from the counters past the select's own
		// registration, meets the operation.
		if sc.publishDeferred(cases) {
			for _, j := range sc.order {
				if k := cases[j].k; k.deferred() {
					k.setDeferred(false)
					if k.register(sc, j) {
						return j
					}
				}
			}
			sc.publishDeferred(cases)
		}
		// A registration made after Close walked past its cell must see
		// Close itself (as park does for plain operations).
		for _, j := range sc.order {
			k := cases[j].k
			if k.registered() && k.closedNow() && k.withdraw() {
				k.setClosed()
				sc.commit(j)
				return j
			}
		}
		sched.Point()
		if sc.st.state.CompareAndSwap(selReg, selWaiting) {
			return -1
		}
		// Dirty: some registrations were killed; register those again,
		// unless the context is done or an OnDone or OnTimeout case is ready.
		select {
		case <-done:
			sc.st.state.Store(selCancelled) // only this goroutine leaves selDirty
			sc.withdrawAll(cases)
			return -2
		default:
		}
		if j := sc.signalReady(); j >= 0 {
			sc.st.state.Store(int32(1 + j)) // only this goroutine leaves selDirty
			sc.withdrawAll(cases)
			return j
		}
		runtime.Gosched()
		sc.st.state.CompareAndSwap(selDirty, selReg)
		sc.retry(cases)
	}
}

// publishDeferred names sc in the selfPending slot of each deferred case's
// channel and reports whether there was any.
func (sc *selCall) publishDeferred(cases []Case) bool {
	any := false
	for _, j := range sc.order {
		if k := cases[j].k; k.deferred() {
			k.publish(sc)
			any = true
		}
	}
	return any
}

// retry prepares a redone registration round: registrations killed by
// claimers are forgotten, and deferred cases try again.
func (sc *selCall) retry(cases []Case) {
	for _, j := range sc.order {
		k := cases[j].k
		k.refresh()
		if k.deferred() {
			k.unpublish(sc)
			k.setDeferred(false)
		}
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// recvCase is OnRecv's case.
type recvCase[T any] struct {
	caseReg
	recvOutcome[T]
	c   *Chan[T]
	seg *segment[T] // where w is registered; nil if nowhere
	i   int
	// The cell this case gave up when it last withdrew on a rendezvous
	// channel (index lastIdx, in last), which its next registration takes
	// back if it can (rejoin), if rejoinable. last is weak: a case left
	// idle must not keep a segment alive once its channel has retired it,
	// nor the segments after it, which a retired segment that is not reused
	// still links to.
	last       weak.Pointer[segment[T]]
	lastIdx    uint64
	rejoinable bool
	// seen is a count of send tickets the case loaded before (sentFor),
	// so that a select loop over a channel with a backlog does not load
	// the senders' counter for every value. A plain word: a Case is in
	// one select at a time.
	seen uint64
}

// recvOutcome is a receive case's callback and what it receives, shared by
// the cases on cells and on a ring.
type recvOutcome[T any] struct {
	f  func(T, bool)
	v  T
	ok bool
}

func (o *recvOutcome[T]) setClosed() { o.ok = false }

func (o *recvOutcome[T]) complete() {
	v, ok := o.v, o.ok
	var zero T
	o.v = zero
	if o.f != nil {
		o.f(v, ok)
	}
}

// sendOutcome is a send case's value, callback and outcome, shared by the
// cases on cells and on a ring.
type sendOutcome[T any] struct {
	v   T  // OnSend's value
	p   *T // the value to send: &v for OnSend, the caller's for OnSendPtr
	f   func(error)
	err error
}

func (o *sendOutcome[T]) setClosed() { o.err = ErrClosed }

func (o *sendOutcome[T]) complete() {
	if o.f != nil {
		o.f(o.err)
	}
}

// caseReg is what the two kinds of case share: the registration and the
// deferred flag (see selfCollide), with the channel's selfPending slot.
type caseReg struct {
	w       *waiter // this case's registration
	pending *atomic.Pointer[selCall]
	// kept is a call state this case keeps for the next package-level select
	// it leads (selCallFor); used says it has led one before.
	kept *selCall
	used bool
	def  bool // deferred: waits, unregistered, for a kick
}

func newCaseReg(op uint8, pending *atomic.Pointer[selCall]) caseReg {
	return caseReg{w: &waiter{op: op, isSel: true}, pending: pending}
}

func (r *caseReg) reg() *caseReg         { return r }
func (r *caseReg) waiter() *waiter       { return r.w }
func (r *caseReg) deferred() bool        { return r.def }
func (r *caseReg) setDeferred(d bool)    { r.def = d }
func (r *caseReg) publish(sc *selCall)   { r.pending.Store(sc) }
func (r *caseReg) unpublish(sc *selCall) { r.pending.CompareAndSwap(sc, nil) }

func (rc *recvCase[T]) snapshot(dst []uint64) ([]uint64, bool) {
	r := rc.c.r.Load()
	s := rc.c.s.Load()
	return append(dst, r, s), r < s&counterMask || s&closedBit != 0
}

func (rc *recvCase[T]) try() bool {
	// A made channel on cells: OnRecv checked that it was made, and gives a
	// ring's channel a ringRecvCase.
	c := rc.c
	r := c.r.Load()
	sw, keep := c.sentFor(r, rc.seen)
	if keep {
		rc.seen = sw
	}
	if r >= sw {
		return false // plainly empty (plainlyEmpty), as tryRecv would say, without the call
	}
	v, err := c.tryRecvAt(r, sw) // with these loads
	if err == ErrEmpty {
		return false
	}
	rc.v, rc.ok = v, err == nil
	return true
}

func (rc *recvCase[T]) register(sc *selCall, j int) bool {
	p := party[T]{m: modeSelect, w: rc.w, sc: sc, j: int32(j)}
	if rc.rejoinable {
		rc.rejoinable = false
		if seg := rc.last.Value(); seg != nil && rc.c.rejoin(seg, rc.lastIdx, &p) {
			rc.seg, rc.i = seg, int(rc.lastIdx&segMask)
			return false
		}
	}
	v, out := rc.c.recvOp(nil, &p)
	if out == outRegistered {
		rc.seg, rc.i = p.seg, p.i
		return false
	}
	rc.v, rc.ok = v, out == outOK // or outClosed
	sc.commit(j)
	return true
}

func (rc *recvCase[T]) registered() bool { return rc.seg != nil }

func (rc *recvCase[T]) refresh() {
	if rc.seg != nil && !rc.c.live(rc.seg, rc.i, rc.w) {
		rc.seg = nil
	}
}

func (rc *recvCase[T]) closedNow() bool {
	return rc.c.doomed(rc.seg.id.Load()<<segShift|uint64(rc.i), rc.w)
}

func (rc *recvCase[T]) withdraw() bool {
	seg := rc.seg
	if seg == nil {
		return false
	}
	ok := rc.c.withdraw(seg, rc.i, rc.w)
	if ok && rc.c.capacity == 0 { // given up by this case: rejoin may take it back
		if rc.last.Value() != seg {
			rc.last = weak.Make(seg) // once per segment: an idle channel's cases keep one
		}
		// The index of the given-up cell: a segment with a given-up cell is
		// never reused, so its id is still this life's, or retiredID if a
		// retire came first; rejoin's hold then fails on the retired
		// segment.
		rc.lastIdx, rc.rejoinable = seg.id.Load()<<segShift|uint64(rc.i), true
	}
	rc.seg = nil
	return ok
}

func (rc *recvCase[T]) collect() {
	out := rc.c.result(rc.w)
	rc.v, rc.ok = rc.c.collect(rc.seg, rc.i, rc.w, out), out == outOK
	rc.seg = nil
}

// sendCase is OnSend's and OnSendPtr's case.
type sendCase[T any] struct {
	caseReg
	sendOutcome[T]
	c   *Chan[T]
	seg *segment[T]
	i   int
}

// deferCase is the select's side of a self-collision (bounded.go,
// selfCollide): one of its cases met the live registration w of another of
// its cases on the same channel, and w was withdrawn. w's case is deferred:
// the select parks with the other case registered and names itself in the
// channel's selfPending, and the first operation that comes to park on the
// channel kicks it to register the deferred case again, which then meets
// that operation.
func (sc *selCall) deferCase(w *waiter) {
	sc.deferred = true
	for _, j := range sc.order {
		if k := sc.cases[j].k; k.waiter() == w {
			k.refresh() // forgets the registration
			k.setDeferred(true)
		}
	}
}

func (sc *sendCase[T]) snapshot(dst []uint64) ([]uint64, bool) {
	c := sc.c
	s := c.s.Load()
	var b uint64
	if c.capacity > 0 {
		b = c.b.Load()
	}
	r := c.r.Load()
	ready := s&closedBit != 0 || c.capacity < 0 || s < b || s < r+uint64(c.capacity)
	// A full verdict does not stand once a Close has begun (fullCheck): call
	// the case ready, and let try find out.
	ready = ready || c.roomEnd.Load() != openMark
	return append(dst, s, b, r), ready
}

func (sc *sendCase[T]) try() bool {
	if sc.c.plainlyFull() {
		return false // as trySend would, without the call
	}
	err := sc.c.trySend(*sc.p)
	if err == ErrFull {
		return false
	}
	sc.err = err
	return true
}

func (sc *sendCase[T]) register(call *selCall, j int) bool {
	p := party[T]{m: modeSelect, w: sc.w, sc: call, j: int32(j)}
	out := sc.c.sendOp(nil, *sc.p, &p)
	if out == outRegistered {
		sc.seg, sc.i = p.seg, p.i
		return false
	}
	sc.err = sendErr(out) // outOK or outClosed
	call.commit(j)
	return true
}

func (sc *sendCase[T]) registered() bool { return sc.seg != nil }

func (sc *sendCase[T]) refresh() {
	if sc.seg != nil && !sc.c.live(sc.seg, sc.i, sc.w) {
		sc.seg = nil
	}
}

func (sc *sendCase[T]) closedNow() bool {
	return sc.c.doomed(sc.seg.id.Load()<<segShift|uint64(sc.i), sc.w)
}

func (sc *sendCase[T]) withdraw() bool {
	if sc.seg == nil {
		return false
	}
	seg := sc.seg
	sc.seg = nil
	return sc.c.withdraw(seg, sc.i, sc.w)
}

func (sc *sendCase[T]) collect() {
	out := sc.c.result(sc.w)
	sc.c.collect(sc.seg, sc.i, sc.w, out)
	sc.err = sendErr(out)
	sc.seg = nil
}
