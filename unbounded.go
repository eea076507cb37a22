package chans

import (
	"runtime"

	"github.com/scalable-go/chans/internal/sched"
)

// The unbounded protocol (seed 002): a send never waits, so its cell sees only
// histories 1-4 of the table in bounded.go:
//
//	S, R                          nil → buffered
//	R parks, S                    nil → wR → done
//	R parks and gives up, S       nil → wR → cancelledRecv   (S restarts)
//	R cannot wait, S              nil → cancelledRecv        (S restarts)
//
// Invariant: cells below R hold no buffered value that a receiver other than
// the one with that ticket can take, and every cell in [R, S) holds, or will
// hold, a buffered value: nothing cancels a send. So S - R is the length.
//
// The receiver's side is recvCell in bounded.go; with no parked senders and
// no buffer end it reduces to the histories above.

// sendUnbounded runs the sender's side for an unbounded channel.
func (c *Chan[T]) sendUnbounded(seg *segment[T], i int, v T) outcome {
	cl := seg.cell(i)
	cl.elem = v
	for {
		st := cl.state.Load()
		notPoison(st)
		sched.Point()
		switch {
		case st == nil:
			if casMark(&cl.state, nil, stBuffered) { // nil → buffered: the send takes effect
				return outOK
			}
		case st == stCancelledRecv:
			drop(cl)
			return outRestart
		case st == stResuming:
			runtime.Gosched()
		case isWaiter(st) && st.op == opRecv:
			if claim(seg, i, st, stDone) { // wR → done: the send takes effect, handed to the parked receiver
				st.wakeUp(resOK)
				return outOK
			}
		default:
			panic("chans: corrupt cell state in unbounded send")
		}
	}
}
