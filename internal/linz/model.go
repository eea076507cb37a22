package linz

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"
)

// LenAny is the answer a test's channel reports for a Len call that gave
// up retrying under receives that never paused: the library documents that
// such a count may be one the channel never held, so the model accepts it
// in any state.
const LenAny = -1

// The sequential specification of a FIFO channel of capacity k >= 1 (or
// unbounded, k < 0). Its state is the queue of buffered values and a closed
// flag; blocked operations do not appear in it, because an operation that
// blocks has no effect until it is linearized, and it is linearized at the
// moment it completes:
//
//	Send(v), SendCtx(v), TrySend(v) -> ok       open and len(q) < k; q = q+v
//	Send, SendCtx, TrySend          -> closed   closed
//	TrySend                         -> full     open and len(q) == k
//	SendCtx, RecvCtx                -> canceled any state; no effect
//	Recv, RecvCtx, TryRecv -> ok v              len(q) > 0 and q[0] == v; q = q[1:]
//	Recv, RecvCtx, TryRecv -> closed            closed and len(q) == 0
//	TryRecv                -> empty             open and len(q) == 0
//	Close -> ok                                 open; closed = true
//	Close -> closed                             closed
//	Len   -> n                                  n == len(q)
//	Len   -> LenAny                             any state (a Len that gave up retrying; see LenAny)
//	Select, SelectCtx, TrySelect (send v | recv) as the case that committed
//	TrySelect -> none                           open, full and empty (never, k >= 1)
//	SelectCtx -> canceled                       any state; no effect
//	SelectTimeout -> timeout                    any state; no effect
//
// A blocking Send that returned nil therefore had room at its linearization
// point, and a blocked Send that Close woke linearizes after Close. A blocking
// operation that never returns has no Operation at all, so drivers run every
// history to completion (they close the channel at the end and drain it).
//
// The specification is deliberately loose about cancellation: a context
// operation may report cancellation in any state, but then it must have had
// no effect, which the queue contents seen by later receives verify. A
// receive that got its value just as its context fired reports ok and is
// checked as a receive.
//
// TryRecv -> empty is legal only when nothing is buffered. The "no sender
// waits" half of the rule needs no separate check for k >= 1: a sender waits
// only while the queue is full, and a waiting sender whose value was already
// due could equally have been linearized before the TryRecv, which Porcupine
// tries.

// state is the model state. q holds the buffered values in order; it is
// never modified after the state is made (a push copies).
type state struct {
	q      []any
	closed bool
}

// Model returns the Porcupine model of a FIFO channel with the given
// capacity: k >= 1, or a negative k (Unbounded) for no limit. Values must be
// comparable with ==. Rendezvous channels (k == 0) have no such model; use
// Check, which runs the rendezvous check for them.
func Model(k int) porcupine.Model {
	if k == 0 {
		panic("linz: Model(0): rendezvous channels are checked by CheckRendezvous")
	}
	return porcupine.Model{
		Init: func() any { return state{} },
		Step: func(s, in, out any) (bool, any) {
			return apply(k, s.(state), in.(Call), out.(Ret))
		},
		Equal: func(a, b any) bool {
			x, y := a.(state), b.(state)
			if x.closed != y.closed || len(x.q) != len(y.q) {
				return false
			}
			for i := range x.q {
				if x.q[i] != y.q[i] {
					return false
				}
			}
			return true
		},
		Hash: func(s any) uint64 {
			x := s.(state)
			h := uint64(len(x.q)) << 1
			if x.closed {
				h |= 1
			}
			if len(x.q) > 0 {
				h ^= hashValue(x.q[0]) * 0x9e3779b97f4a7c15
			}
			return h
		},
		DescribeOperation: func(in, out any) string { return Describe(in.(Call), out.(Ret)) },
		DescribeState: func(s any) string {
			x := s.(state)
			var b strings.Builder
			b.WriteByte('[')
			for i, v := range x.q {
				if i > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprint(&b, v)
			}
			b.WriteByte(']')
			if x.closed {
				b.WriteString(" closed")
			}
			return b.String()
		},
	}
}

// hashValue hashes the common value types cheaply and others not at all.
func hashValue(v any) uint64 {
	switch v := v.(type) {
	case int:
		return uint64(v)
	case int64:
		return uint64(v)
	case uint64:
		return v
	case string:
		return uint64(len(v))
	}
	return 0
}

func apply(k int, s state, c Call, r Ret) (bool, any) {
	full := k >= 0 && len(s.q) >= k
	if c.Kind.IsSelect() {
		if p, ok := asPlain(c, r); ok {
			c = p // it took effect as its committed case
		} else {
			switch r.Res {
			case Empty: // TrySelect: neither case ready at one instant
				return c.Kind == TrySelect && !s.closed && full && len(s.q) == 0, s
			case Canceled:
				return c.Kind == SelectCtx, s
			case TimedOut:
				return c.Kind == SelectTimeout, s
			}
			return false, s
		}
	}
	switch {
	case c.Kind.IsSend():
		switch r.Res {
		case OK:
			if s.closed || full {
				return false, s
			}
			return true, state{q: append(s.q[:len(s.q):len(s.q)], c.V)}
		case Closed:
			return s.closed, s
		case Full:
			return c.Kind == TrySend && !s.closed && full, s
		case Canceled:
			return c.Kind == SendCtx, s
		}
	case c.Kind.IsRecv():
		switch r.Res {
		case OK:
			if len(s.q) == 0 || s.q[0] != r.V {
				return false, s
			}
			return true, state{q: s.q[1:], closed: s.closed}
		case Closed:
			return s.closed && len(s.q) == 0, s
		case Empty:
			return c.Kind == TryRecv && !s.closed && len(s.q) == 0, s
		case Canceled:
			return c.Kind == RecvCtx, s
		}
	case c.Kind == Close:
		switch r.Res {
		case OK:
			return !s.closed, state{q: s.q, closed: true}
		case Closed:
			return s.closed, s
		}
	case c.Kind == Len:
		return r.N == LenAny || r.N == len(s.q), s
	}
	return false, s
}

// Describe renders one operation for the visualisation and for failure
// messages, e.g. "Send(3) → ok", "TryRecv() → 7", "Recv() → closed".
func Describe(c Call, r Ret) string {
	var arg string
	if c.Kind.IsSend() || c.Kind == Exchange || c.Kind.IsSelect() {
		arg = fmt.Sprint(c.V)
	}
	var res string
	switch {
	case c.Kind.IsSelect() && r.Case == CaseNone:
		res = "none"
		if r.Res != Empty {
			res = r.Res.String()
		}
	case c.Kind.IsSelect() && r.Case == CaseSend:
		res = "sent " + r.Res.String()
	case c.Kind.IsSelect() && r.Res == OK:
		res = "received " + fmt.Sprint(r.V)
	case c.Kind.IsSelect():
		res = "received " + r.Res.String()
	case c.Kind == Len:
		res = fmt.Sprint(r.N)
	case c.Kind.IsRecv() && r.Res == OK:
		res = fmt.Sprint(r.V)
	case r.Res == Other:
		res = "error " + r.Err
	default:
		res = r.Res.String()
	}
	return fmt.Sprintf("%v(%s) → %s", c.Kind, arg, res)
}
