package linz

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// Rendezvous channels (capacity 0) have no useful sequential model in which
// a send and its receive are separate atomic steps: a Send must not return
// before a receiver has its value, which a queue model cannot say. The
// specification used here treats a send and the receive that took its value
// as one atomic exchange, which must happen at a single instant inside both
// calls. With unique values the exchange partner of every receive is known,
// so the check runs in two stages:
//
//  1. Matching. Every value received (ok) must come from exactly one send,
//     that send must have returned ok, no value may be received twice, and
//     every send that returned ok must have been received (a select whose
//     send case committed counts as a send, one whose receive case did as a
//     receive). The two calls of
//     a pair must overlap in time (the receive cannot end before the send
//     starts, and the send cannot end before the receive starts): the
//     intersection of their intervals is where the exchange happened. A
//     TrySend (or TrySelect) cannot have been taken by a TryRecv (or
//     TrySelect): each needs the other side to be waiting.
//  2. Porcupine. Each pair becomes one operation, Exchange(v), spanning the
//     intersection, and the history of exchanges and unmatched calls is
//     checked against a model whose only state is the closed flag:
//
//	Exchange(v)                      open
//	Send, SendCtx, TrySend -> closed closed
//	Recv, RecvCtx, TryRecv -> closed closed
//	TrySend -> full, TryRecv -> empty open
//	SendCtx, RecvCtx -> canceled     any state; no effect
//	Close -> ok                      open; closed = true
//	Close -> closed                  closed
//	Len -> n                         n == 0
//	selects                          as the case that committed;
//	                                 TrySelect -> none: open;
//	                                 SelectCtx -> canceled: any state;
//	                                 SelectTimeout -> timeout: any state
//
// That finds a single instant for Close that every exchange precedes and
// every closed result follows.
//
// FIFO order needs no separate rule. Two exchanges are ordered only through
// their instants; if send 1 returned before send 2 started and receive 2
// returned before receive 1 started, the two intersections cannot both be
// non-empty, and stage 1 already rejects the history.
//
// Soundness: each rule holds for any correct rendezvous channel, because a
// send that returns ok has handed its value to a receive that was in
// progress, and close ends all exchanges. What the check does not verify:
// that TrySend -> full and TryRecv -> empty were not spurious. A receive that
// called before a TrySend may still not have registered when the TrySend
// looked, so intervals alone cannot refute "full" (dual linearizability
// needs each blocking call's registration instant, which a black-box
// recorder does not see). Those results are checked on buffered channels,
// where the queue model does refute them.

// Exchange is the Kind of a merged send-receive pair in a rendezvous history.
const Exchange Kind = 100

// CheckRendezvous runs stage 1 on ops and returns the merged history for
// stage 2, or a description of the first violation found.
func CheckRendezvous(ops []porcupine.Operation) (merged []porcupine.Operation, problem string) {
	sends := make(map[any]int) // value offered -> index in ops
	for i, op := range ops {
		c := op.Input.(Call)
		if !c.Kind.IsSend() && !c.Kind.IsSelect() {
			continue
		}
		if j, dup := sends[c.V]; dup {
			return nil, fmt.Sprintf("driver error: value %v offered twice (%s and %s); values must be unique", c.V, DescribeOp(ops[j]), DescribeOp(op))
		}
		sends[c.V] = i
	}
	partner := make(map[int]int) // send index -> receive index
	for i, op := range ops {
		if !recvOK(op) {
			continue
		}
		c, r := op.Input.(Call), op.Output.(Ret)
		j, sent := sends[r.V]
		if !sent {
			return nil, fmt.Sprintf("%s received a value that no call sent", DescribeOp(op))
		}
		s := ops[j]
		if k, twice := partner[j]; twice {
			return nil, fmt.Sprintf("value %v of %s received twice: by %s and by %s", r.V, DescribeOp(s), DescribeOp(ops[k]), DescribeOp(op))
		}
		partner[j] = i
		if !sendOK(s) {
			return nil, fmt.Sprintf("%s received the value of %s, which did not report sending it", DescribeOp(op), DescribeOp(s))
		}
		if nonBlocking(s.Input.(Call).Kind) && nonBlocking(c.Kind) {
			return nil, fmt.Sprintf("%s took the value of %s, but neither call waits", DescribeOp(op), DescribeOp(s))
		}
		if op.Return < s.Call || s.Return < op.Call {
			return nil, fmt.Sprintf("%s and %s exchanged a value but do not overlap in time", DescribeOp(s), DescribeOp(op))
		}
	}
	merged = make([]porcupine.Operation, 0, len(ops))
	for i, op := range ops {
		switch {
		case sendOK(op):
			k, taken := partner[i]
			if !taken {
				return nil, fmt.Sprintf("%s returned ok but no receive took its value", DescribeOp(op))
			}
			c, rv := op.Input.(Call), ops[k]
			merged = append(merged, porcupine.Operation{
				ClientId: rv.ClientId,
				Input:    Call{Kind: Exchange, V: c.V},
				Call:     max(op.Call, rv.Call),
				Output:   Ret{Res: OK, V: c.V, Batch: exchangeBatch(op, rv)},
				Return:   min(op.Return, rv.Return),
				Metadata: fmt.Sprintf("%v by client %d ⇄ %v by client %d", c.Kind, op.ClientId, rv.Input.(Call).Kind, rv.ClientId),
			})
		case recvOK(op):
			// Merged into its send's Exchange.
		default:
			merged = append(merged, op)
		}
	}
	return merged, ""
}

// RendezvousModel is the stage-2 model of CheckRendezvous: its state is the
// closed flag.
func RendezvousModel() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return false },
		Step: func(s, in, out any) (bool, any) {
			closed, c, r := s.(bool), in.(Call), out.(Ret)
			if c.Kind.IsSelect() {
				p, ok := asPlain(c, r)
				if !ok {
					switch r.Res {
					case Empty:
						return c.Kind == TrySelect && !closed, closed
					case Canceled:
						return c.Kind == SelectCtx, closed
					case TimedOut:
						return c.Kind == SelectTimeout, closed
					}
					return false, closed
				}
				c = p
			}
			switch {
			case c.Kind == Exchange:
				return !closed, closed
			case c.Kind == Close:
				switch r.Res {
				case OK:
					return !closed, true
				case Closed:
					return closed, closed
				}
			case c.Kind == Len:
				return r.N == 0, closed
			case c.Kind.IsSend() || c.Kind.IsRecv():
				switch r.Res {
				case Closed:
					return closed, closed
				case Full:
					return c.Kind == TrySend && !closed, closed
				case Empty:
					return c.Kind == TryRecv && !closed, closed
				case Canceled:
					return c.Kind == SendCtx || c.Kind == RecvCtx, closed
				}
			}
			return false, closed
		},
		DescribeOperation: func(in, out any) string { return Describe(in.(Call), out.(Ret)) },
		DescribeState: func(s any) string {
			if s.(bool) {
				return "closed"
			}
			return "open"
		},
		DescribeOperationMetadata: func(m any) string {
			if m == nil {
				return ""
			}
			return fmt.Sprint(m)
		},
	}
}

// DescribeOp renders a recorded operation with its client and times.
func DescribeOp(op porcupine.Operation) string {
	r := op.Output.(Ret)
	return fmt.Sprintf("client %d %s%s [%d,%d]", op.ClientId, Describe(op.Input.(Call), r), batchNote(r.Batch), op.Call, op.Return)
}
