package linz_test

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/scalable-go/chans/internal/linz"
)

// op builds one recorded operation of client cl over [call, ret].
func op(cl int, call, ret int64, in linz.Call, out linz.Ret) porcupine.Operation {
	return porcupine.Operation{ClientId: cl, Input: in, Call: call, Output: out, Return: ret}
}

// sendAt and recvAt are the places of value i of an n-value send or
// receive batch numbered id.
func sendAt(id int64, i, n int) linz.Batch { return linz.Batch{Send: linz.Pos{ID: id, I: i, N: n}} }
func recvAt(id int64, i, n int) linz.Batch { return linz.Batch{Recv: linz.Pos{ID: id, I: i, N: n}} }

func send(v int) linz.Call { return linz.Call{Kind: linz.Send, V: v} }

var recv = linz.Call{Kind: linz.Recv}

func ok(b linz.Batch) linz.Ret              { return linz.Ret{Res: linz.OK, Batch: b} }
func got(v int, b linz.Batch) linz.Ret      { return linz.Ret{Res: linz.OK, V: v, Batch: b} }
func res(r linz.Res, b linz.Batch) linz.Ret { return linz.Ret{Res: r, Batch: b} }

// TestBatchModel checks the batch rule on hand-made histories: what it must
// accept (values of a batch interleaved with other clients' operations) and
// what it must reject (values of a batch taking effect out of order, on
// either side, buffered or rendezvous). Each rejected history is accepted
// once its batch places are stripped, which shows that the rule, not the
// single-operation model, rejects it.
func TestBatchModel(t *testing.T) {
	tests := []struct {
		name   string
		k      int
		ops    []porcupine.Operation
		legal  bool
		strips bool // the stripped history is legal
	}{
		{
			// SendMany(1, 2, 3) into a buffer of one, a receiver taking
			// the values one at a time: no single instant fits all three,
			// one at a time they do.
			name: "send batch interleaved with receives", k: 1, legal: true,
			ops: []porcupine.Operation{
				op(0, 1, 20, send(1), ok(sendAt(1, 0, 3))),
				op(0, 1, 20, send(2), ok(sendAt(1, 1, 3))),
				op(0, 1, 20, send(3), ok(sendAt(1, 2, 3))),
				op(1, 2, 3, recv, got(1, linz.Batch{})),
				op(1, 4, 5, recv, got(2, linz.Batch{})),
				op(1, 6, 7, recv, got(3, linz.Batch{})),
			},
		},
		{
			// RecvMany taking 1 and 2 while a second send comes between.
			name: "receive batch interleaved with a send", k: 1, legal: true,
			ops: []porcupine.Operation{
				op(0, 1, 2, send(1), ok(linz.Batch{})),
				op(0, 3, 10, send(2), ok(linz.Batch{})),
				op(1, 4, 20, recv, got(1, recvAt(4, 0, 2))),
				op(1, 4, 20, recv, got(2, recvAt(4, 1, 2))),
			},
		},
		{
			name: "send batch reordered", k: 4, strips: true,
			ops: []porcupine.Operation{
				op(0, 1, 2, send(1), ok(sendAt(1, 0, 2))),
				op(0, 1, 2, send(2), ok(sendAt(1, 1, 2))),
				op(1, 3, 4, recv, got(2, linz.Batch{})),
				op(1, 5, 6, recv, got(1, linz.Batch{})),
			},
		},
		{
			name: "receive batch reordered", k: chanUnbounded, strips: true,
			ops: []porcupine.Operation{
				op(0, 1, 2, send(1), ok(linz.Batch{})),
				op(0, 3, 4, send(2), ok(linz.Batch{})),
				op(1, 5, 6, recv, got(2, recvAt(5, 0, 2))),
				op(1, 5, 6, recv, got(1, recvAt(5, 1, 2))),
			},
		},
		{
			// SendMany(1, 2) → (1, closed): 1 before Close, 2 failing
			// after it.
			name: "send batch failing at Close", k: 2, legal: true,
			ops: []porcupine.Operation{
				op(0, 1, 10, send(1), ok(sendAt(1, 0, 2))),
				op(0, 1, 10, send(2), res(linz.Closed, sendAt(1, 1, 2))),
				op(1, 2, 3, recv, got(1, linz.Batch{})),
				op(1, 4, 5, linz.Call{Kind: linz.Close}, ok(linz.Batch{})),
			},
		},
		{
			// Rendezvous: a send batch and a receive batch exchanging
			// two values crosswise; the exchanges overlap in time, so
			// only the places order them.
			name: "rendezvous batches crossed", k: 0, strips: true,
			ops: []porcupine.Operation{
				op(0, 1, 10, send(1), ok(sendAt(1, 0, 2))),
				op(0, 1, 10, send(2), ok(sendAt(1, 1, 2))),
				op(1, 2, 9, recv, got(2, recvAt(2, 0, 2))),
				op(1, 2, 9, recv, got(1, recvAt(2, 1, 2))),
			},
		},
		{
			name: "rendezvous batches in order", k: 0, legal: true,
			ops: []porcupine.Operation{
				op(0, 1, 10, send(1), ok(sendAt(1, 0, 2))),
				op(0, 1, 10, send(2), ok(sendAt(1, 1, 2))),
				op(1, 2, 9, recv, got(1, recvAt(2, 0, 2))),
				op(1, 2, 9, recv, got(2, recvAt(2, 1, 2))),
			},
		},
		{
			// Rendezvous: the second value of a send batch taken by a
			// receive that returned before the first value's receive
			// began.
			name: "rendezvous send batch out of order", k: 0, strips: true,
			ops: []porcupine.Operation{
				op(0, 1, 10, send(1), ok(sendAt(1, 0, 2))),
				op(0, 1, 10, send(2), ok(sendAt(1, 1, 2))),
				op(1, 2, 3, recv, got(2, linz.Batch{})),
				op(2, 4, 5, recv, got(1, linz.Batch{})),
			},
		},
		{
			// Rendezvous: two non-blocking calls never meet, batch or not.
			name: "rendezvous TryRecvMany from TrySend", k: 0,
			ops: []porcupine.Operation{
				op(0, 1, 4, linz.Call{Kind: linz.TrySend, V: 1}, ok(linz.Batch{})),
				op(1, 2, 3, linz.Call{Kind: linz.TryRecv}, got(1, recvAt(2, 0, 1))),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := linz.Check(tc.k, tc.ops, 10*time.Second)
			if want := verdictOf(tc.legal); v.Result != want {
				t.Fatalf("verdict %v, want %v (%s)\n%s", v.Result, want, v.Problem, linz.Dump(tc.ops))
			}
			if !tc.strips {
				return
			}
			if s := linz.Check(tc.k, linz.StripBatches(tc.ops), 10*time.Second); s.Result != porcupine.Ok {
				t.Fatalf("without batch places: verdict %v (%s), want Ok: the case does not isolate the batch rule", s.Result, s.Problem)
			}
		})
	}
}

const chanUnbounded = -1

func verdictOf(legal bool) porcupine.CheckResult {
	if legal {
		return porcupine.Ok
	}
	return porcupine.Illegal
}
