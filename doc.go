// Package chans provides FIFO channels designed to scale with the number of
// cores: rendezvous, buffered and unbounded, with blocking, non-blocking
// (Try) and cancellable (Context) operations, Close with Go's drain
// semantics, and Select over a dynamic list of channels.
//
// At GOMAXPROCS 1 a buffered Chan moves values as fast as a built-in
// channel or faster, allocating nothing; with more cores a Chan is faster
// where operations come with work, and slower on hand-offs between two
// goroutines. The README's performance section says by how much, and when
// to choose one over the other.
//
// # Guarantees
//
//   - FIFO per channel. Every Send that returned nil is received exactly once;
//     a Send that returned an error delivered nothing.
//   - Close: later sends fail with ErrClosed at once; senders parked at Close
//     fail with ErrClosed and their values are never received; values already
//     delivered stay receivable; then receives report the channel closed.
//   - A cancelled SendContext or RecvContext has no effect. A value handed to a
//     receiver as its context fired is returned, never dropped.
//   - Rendezvous (capacity 0): Send returns once a receiver has the value.
//   - Try operations never fail spuriously, and never park. To give exact
//     answers they may yield, briefly, to another goroutine midway through
//     an operation on the same channel; never to a parked goroutine.
//   - Every operation is linearizable; each method's documentation names its
//     linearization point.
//
// # Differences from chan
//
//   - Operations on a closed channel return ErrClosed instead of panicking;
//     a second Close returns ErrClosed.
//   - There is no nil Chan: New returns a ready channel; OnRecv and OnSend
//     with a nil *Chan make a case that is never ready, like a nil chan in a
//     select statement.
//   - Unbounded channels exist (capacity Unbounded).
//   - Select is a function over a dynamic list of cases; a Selector reuses
//     one list without allocating.
//   - A Chan must not be copied (go vet reports copies); share the pointer.
//
// # How it works
//
// Senders and receivers each take a ticket with one fetch-and-add, on the
// counters S and R, and meet in the cell of that index in an infinite array
// emulated by a linked list of fixed-size segments, the design of "Faster
// Channels in Go" (Eli Rosenthal) and of Koval, Alistarh and Elizarov, "Fast
// and Scalable Channels in Kotlin Coroutines" (PPoPP 2023). Only the sender
// and the receiver of one ticket ever contend on a cell. The buffer of a
// buffered channel ends at "R + capacity" as long as no sender has given up
// its slot; from the first send that may (a non-blocking send that finds no
// room, a send whose context fires, a select's send case, Close), the channel
// keeps the end of its buffer in a third counter B, moved by receivers,
// because cancelled senders leave holes that "R + capacity" would count as
// room. Sends remember the largest buffer end one of them has seen, and
// receivers check that the segment of the cell they make part of the buffer
// is linked before they look for its sender, so that while the channel
// neither fills nor empties, a send reads no memory that receives write and
// a receive none that sends write, apart from the cells they meet in. A
// receive that must not wait (TryRecv, a select's receive case) claims a
// ticket only when its sender holds one, which it learns by reading S; a
// select's receive case and a TryRecv through a Handle remember the count
// they read, and while the tickets they claim stay below it they do not
// read S again.
// A party that must wait parks on a waiter registered in its cell; its
// partner claims the waiter with one compare-and-swap on the cell and wakes
// it, with no wake-up at all when the claim comes before the waiting
// goroutine has blocked (as it usually does when the partner runs on
// another core, or, with GOMAXPROCS 2 or less, during the yield the waiter
// makes before it blocks, on rendezvous and one-slot channels to the back
// of its own P's run queue (runtime.goyield); with more Ps that yield would
// hand the waiter to an idle P and move it between cores). A waiter that
// blocks without a context parks in the runtime itself (runtime.gopark,
// made ready again with runtime.goready, as Go's channels do), with no
// channel in between; one that also waits for a context blocks in a
// select on a token channel and its context's Done. Race builds, and
// builds with the tag chans_nolinkname, use the token channel for both
// (sleep.go), and yield with runtime.Gosched.
// Select registers in each case's cell and commits through one state
// word per call, after Koval, Alistarh and Elizarov, "Scalable FIFO Channels
// for Programming via CSP" (Euro-Par 2019), and Dmitry Vyukov, "Go channels
// on steroids". A case that another case beat gives its cell up; on a
// rendezvous channel its next registration takes that cell back while no
// send has reached it, so that a select parked again and again on an idle
// channel (a quit channel) uses one cell of it rather than one per call.
// bounded.go has the table of cell histories; select.go the select
// protocol.
//
// A buffered channel made while GOMAXPROCS is 1 keeps its values in a ring
// instead: capacity slots reused lap after lap, each with a mark saying
// which position of the stream it serves, after the sequence numbers of
// Dmitry Vyukov's "Bounded MPMC queue" (a mark is one byte, the lap modulo
// 256, eight to a word, so that a batch publishes or frees a run of slots
// with one atomic add per word). A send claims the next position with one
// compare-and-swap on a tail counter, a receive with one on a head counter,
// and each claim is the operation's linearization point. A sender that
// finds the ring full parks on a queue, and a receive that frees a slot
// moves the oldest parked sender's value in, so parked senders are served
// in the order they came; a receiver that finds it empty parks on another
// queue, and each send wakes the oldest (in a ring made while GOMAXPROCS is
// 1, it first claims its value for it, or, when the ring is empty and no
// sender is parked, gives it the value without the ring, as Go's channels
// hand a value to a parked receiver; there a waiter also yields once
// before it blocks, so that the partner it has just woken usually serves
// it first). A select's case waits on the same queues and is woken to try
// again. On one P these claims cost less than the cells and
// allocate nothing; with more Ps the compare-and-swaps are
// retried, and parking through the queues costs more than the cells' own
// hand-offs, so a buffered channel made with more Ps uses the cells (ring.go has the
// details). An unbounded channel made while GOMAXPROCS is 1 or 2 keeps
// its values in a list of such rings (no send of it ever parks, so the
// queues' costs do not arise): the last serves every position from its
// start on, and a send that finds it full claims its position in a new,
// larger ring (up to 1024 slots) that it links after it; receivers move to
// the next ring once they are past the positions of the one before, as in
// the linked lists of ring queues of Morrison and Afek, "Fast Concurrent
// Queues for x86 Processors" (PPoPP 2013). A ring of the largest size that
// receivers have left goes to a pool (sync.Pool) from which later growths
// take it, from a new start, once no receive is still taking a value from
// it; a goroutine that still holds it from before acts on it only if the
// receive side has not moved since it looked. ring_unbounded.go has the
// argument. The choice is made once, by
// New; the guarantees above are the same either way.
//
// Channels on cells reuse their segments: each receive that gets a value
// marks its cell done with as its last action on it (in a buffered channel,
// after the buffer expansion it owes), and the oldest segment whose cells
// are all done with, and that no goroutine holds, is retired and linked
// again at the end of the list, with a new index; goroutines that may
// still hold it from before check the index they read, hop by hop, and
// start again from the oldest segment not retired when it changed
// (segment.go, "Reuse"). Grows and receives that move to a later segment
// retire what they can, so a burst's segments go once it is received.
// Retirement goes in list order, so a goroutine stopped in the middle of
// its step holds back every later segment; when it moves on they retire
// together, and what the channel's few spare slots cannot keep waits on a
// stack the channel holds through a weak pointer, for the next such stall
// (the garbage collector frees it). So steady traffic allocates nothing
// there. A channel's first removal (a segment all of whose cells were
// given up) ends its reuse; from then on its segments go to the garbage
// collector, one per 256 messages (about 19 bytes a message for a
// Chan[int]). A buffered channel's first hole (the first send that may
// give up its cell: a send whose context fired while it waited, a
// select's send case, Close) does not: the buffer expansions that follow,
// which act on cells of tickets they do not hold, hold the segment of the
// cell first. A segment with a cell given up is left to the collector.
// A TrySend takes a ticket only when it has room, and a TryRecv only when
// its sender holds one, so neither gives a cell up for want of room or of
// a value. Waiters come from a pool or, through a Handle, are kept by
// the Handle. A bounded ring allocates its slots at New and nothing
// after; an unbounded ring allocates a ring when its queue outgrows the
// ones it has, and nothing in steady state, even while the queue keeps
// growing and draining: it reuses the rings it left behind.
// The garbage collector empties the pool that keeps them, so the memory of
// a burst goes once the burst is received (after two collections).
package chans
