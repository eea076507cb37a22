package linz

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/anishathalye/porcupine"
)

// Batch operations (SendMany, SendManyContext, RecvMany, RecvManyContext,
// TryRecvMany). A batch stands for the sequence of single operations its
// values go through, in order, each taking effect at its own instant inside
// the batch call, with other clients' operations free to come in between.
// Neither of the obvious encodings says that:
//
//   - one Porcupine operation per batch, applying its values at once,
//     rejects correct histories (a SendMany of three values into a buffer
//     of one, with a receiver taking them one at a time, has no single
//     instant at which all three fit);
//   - one operation per value, each with the batch's interval and nothing
//     else, accepts wrong ones: the values of a batch would be concurrent
//     with each other, so a batch that delivered them in the wrong order
//     would still linearize.
//
// So the recorder writes one operation per value, each a plain single
// operation (SendMany's values are Sends, TryRecvMany's are TryRecvs, and
// so on) with the batch call's interval, and marks each with its place in
// its batch (Ret.Batch). The model (Batched) adds one rule to the model of
// the single operations: the value at place i of a batch takes effect only
// after the value at place i-1 of the same batch. Its state is the inner
// model's state and, for each batch partly linearized, the place of the
// next value. A linearization the checker accepts is therefore exactly an
// interleaving of the single operations in which each batch's values take
// effect in order inside the batch's interval, which is what the batch
// operations promise; nothing more is accepted and nothing less.
//
// For buffered and unbounded channels Check also derives, from the history,
// orders that every linearization keeps (FIFO between values whose order is
// certain on one side), narrows the intervals by them and has the model
// enforce them: without that, concurrent batches made Porcupine explore
// interleavings of their values for seconds, or time out. It changes no
// verdict; see "Orders every linearization keeps" below, and
// TestBatchOrdersKeepVerdicts in internal/refchan, which compares verdicts.
//
// Recorded operations, for a batch call at (call, return):
//
//	SendMany(vs) → (n, nil)      Send(vs[i]) → ok, i < n
//	SendMany(vs) → (n, err)      those, and Send(vs[n]) → err (closed, or canceled
//	                             for SendManyContext); vs[n+1:] are not recorded:
//	                             a receive of one of them matches no send
//	RecvMany(dst) → (n, nil)     Recv() → dst[i], i < n
//	RecvMany(dst) → (0, err)     Recv() → err
//	any other shape              one operation with result Other: illegal
//
// with Send, Recv replaced by SendCtx, RecvCtx or TryRecv for the other
// variants. The place is Pos{ID: the call's timestamp, I: i, N: the number
// of operations recorded for the call}. A failed value's place comes after
// the values sent, so a SendMany that reports ErrClosed must have delivered
// vs[:n] before the channel closed.
//
// Rendezvous channels: CheckRendezvous pairs each value of a batch like any
// single operation, so a value of a batch receive pairs with exactly one
// send, and the exchange (Exchange) keeps both places, its send's and its
// receive's: Batched orders the exchanges of a batch on each side. A
// TryRecvMany's values are TryRecvs, so none may come from a TrySend. A
// RecvMany's values are Recvs, although only its first may wait: a value
// after the first taken from a TrySend is accepted (lenient, never wrong
// for a correct channel).
//
// What the model does not check: that a RecvMany took every value
// available (up to len(dst)) when it returned. That is defined only with
// nothing in flight, where the sequential fuzzer (FuzzBatch) checks it.

// Pos is the place of a recorded operation in a batch call: the batch's
// number (the call's timestamp, unique in a history; 0 for a single call),
// the index I of its value, and the number N of operations recorded for the
// call.
type Pos struct {
	ID   int64
	I, N int
}

// Batch places an operation in batch calls: Send for the side that sent its
// value, Recv for the side that received it. A recorded operation has one
// of them at most; a rendezvous Exchange may have both.
type Batch struct {
	Send, Recv Pos
}

func (b Batch) isZero() bool { return b.Send.ID == 0 && b.Recv.ID == 0 }

func (p Pos) String() string { return fmt.Sprintf("#%d[%d/%d]", p.ID, p.I+1, p.N) }

// batchNote renders b for DescribeOp: "" for a single call.
func batchNote(b Batch) string {
	switch {
	case b.isZero():
		return ""
	case b.Recv.ID == 0:
		return " of send batch " + b.Send.String()
	case b.Send.ID == 0:
		return " of receive batch " + b.Recv.String()
	}
	return " of send batch " + b.Send.String() + " and receive batch " + b.Recv.String()
}

// BatchOps is the set of batch operations that a channel and its handles
// share.
type BatchOps[T any] interface {
	SendMany(vs []T) (int, error)
	SendManyContext(ctx context.Context, vs []T) (int, error)
	RecvMany(dst []T) (int, error)
	RecvManyContext(ctx context.Context, dst []T) (int, error)
	TryRecvMany(dst []T) (int, error)
}

func (c *Client[T]) batchOps() BatchOps[T] {
	b, ok := c.ops.(BatchOps[T])
	if !ok {
		panic(fmt.Sprintf("linz: %T has no batch operations", c.ops))
	}
	return b
}

// endBatch records the operations of one batch call that began at call.
func (c *Client[T]) endBatch(call int64, ins []Call, outs []Ret) {
	ret := c.h.clock.Add(1)
	for i := range ins {
		c.log.ops = append(c.log.ops, porcupine.Operation{
			ClientId: c.log.id,
			Input:    ins[i],
			Call:     call,
			Output:   outs[i],
			Return:   ret,
		})
	}
}

// sendBatch records a send batch of vs that returned (n, err), as kind.
func (c *Client[T]) sendBatch(call int64, kind Kind, name string, vs []T, n int, err error) {
	if n < 0 || n > len(vs) || (err == nil) != (n == len(vs)) {
		var v any
		if len(vs) > 0 {
			v = vs[0]
		}
		c.endBatch(call, []Call{{Kind: kind, V: v}}, []Ret{{Res: Other,
			Err: fmt.Sprintf("%s of %d values returned (%d, %v)", name, len(vs), n, err)}})
		return
	}
	m := n
	if err != nil {
		m++ // the value that failed
	}
	ins, outs := make([]Call, m), make([]Ret, m)
	for i := range m {
		ins[i] = Call{Kind: kind, V: vs[i]}
		outs[i] = Ret{Res: OK}
		if i == n {
			outs[i] = c.classify(err)
		}
		outs[i].Batch.Send = Pos{ID: call, I: i, N: m}
	}
	c.endBatch(call, ins, outs)
}

// recvBatch records a receive batch into dst that returned (n, err), as kind.
func (c *Client[T]) recvBatch(call int64, kind Kind, name string, dst []T, n int, err error) {
	if n < 0 || n > len(dst) || (err == nil) != (n > 0) {
		c.endBatch(call, []Call{{Kind: kind}}, []Ret{{Res: Other,
			Err: fmt.Sprintf("%s into %d slots returned (%d, %v)", name, len(dst), n, err)}})
		return
	}
	if n == 0 {
		r := c.classify(err)
		r.Batch.Recv = Pos{ID: call, N: 1}
		c.endBatch(call, []Call{{Kind: kind}}, []Ret{r})
		return
	}
	ins, outs := make([]Call, n), make([]Ret, n)
	for i := range n {
		ins[i] = Call{Kind: kind}
		outs[i] = Ret{Res: OK, V: dst[i]}
		outs[i].Batch.Recv = Pos{ID: call, I: i, N: n}
	}
	c.endBatch(call, ins, outs)
}

// SendMany records ops.SendMany(vs), which must not be empty.
func (c *Client[T]) SendMany(vs []T) (int, error) {
	t := c.begin()
	n, err := c.batchOps().SendMany(vs)
	c.sendBatch(t, Send, "SendMany", vs, n, err)
	return n, err
}

// SendManyContext records ops.SendManyContext(ctx, vs), which must not be
// empty.
func (c *Client[T]) SendManyContext(ctx context.Context, vs []T) (int, error) {
	t := c.begin()
	n, err := c.batchOps().SendManyContext(ctx, vs)
	c.sendBatch(t, SendCtx, "SendManyContext", vs, n, err)
	return n, err
}

// RecvMany records ops.RecvMany(dst), which must not be empty.
func (c *Client[T]) RecvMany(dst []T) (int, error) {
	t := c.begin()
	n, err := c.batchOps().RecvMany(dst)
	c.recvBatch(t, Recv, "RecvMany", dst, n, err)
	return n, err
}

// RecvManyContext records ops.RecvManyContext(ctx, dst), which must not be
// empty.
func (c *Client[T]) RecvManyContext(ctx context.Context, dst []T) (int, error) {
	t := c.begin()
	n, err := c.batchOps().RecvManyContext(ctx, dst)
	c.recvBatch(t, RecvCtx, "RecvManyContext", dst, n, err)
	return n, err
}

// TryRecvMany records ops.TryRecvMany(dst), which must not be empty.
func (c *Client[T]) TryRecvMany(dst []T) (int, error) {
	t := c.begin()
	n, err := c.batchOps().TryRecvMany(dst)
	c.recvBatch(t, TryRecv, "TryRecvMany", dst, n, err)
	return n, err
}

// ===== The model =====

// batchState is the state of the batch model: the inner model's state;
// sorted by batch, the place of the next value of every batch partly
// linearized; and which of the operations that others must follow (see
// orders) are linearized. None of them is modified after the state is made.
type batchState struct {
	inner any
	next  []Pos    // ID and I: the batch and the index its next value must have
	done  []uint64 // bit j: the operation with prerequisite number j is linearized
}

// nextOf returns the index the next value of batch id must have.
func (s batchState) nextOf(id int64) int {
	if j, ok := slices.BinarySearchFunc(s.next, id, cmpPos); ok {
		return s.next[j].I
	}
	return 0
}

// advance returns s.next with batch p.ID moved past the value at p.
func advance(next []Pos, p Pos) []Pos {
	j, found := slices.BinarySearchFunc(next, p.ID, cmpPos)
	switch {
	case p.I+1 == p.N && found: // the batch is complete: forget it
		return slices.Delete(slices.Clone(next), j, j+1)
	case p.I+1 == p.N:
		return next
	case found:
		n := slices.Clone(next)
		n[j].I = p.I + 1
		return n
	}
	return slices.Insert(slices.Clone(next), j, Pos{ID: p.ID, I: p.I + 1})
}

func cmpPos(p Pos, id int64) int {
	switch {
	case p.ID < id:
		return -1
	case p.ID > id:
		return 1
	}
	return 0
}

// Batched returns m with the batch rule: an operation at place p of a batch
// (Ret.Batch, on either side) takes effect only as the next value of that
// batch, after the one at place p.I-1. Operations of single calls step m
// alone.
func Batched(m porcupine.Model) porcupine.Model { return batched(m, nil) }

// batched is Batched, also enforcing the orders of ord if it is not nil.
func batched(m porcupine.Model, ord *orders) porcupine.Model {
	equal := m.Equal
	if equal == nil {
		equal = func(a, b any) bool { return a == b }
	}
	b := porcupine.Model{
		Init: func() any { return batchState{inner: m.Init()} },
		Step: func(s, in, out any) (bool, any) {
			st, bt := s.(batchState), out.(Ret).Batch
			for _, p := range [2]Pos{bt.Send, bt.Recv} {
				if p.ID != 0 && st.nextOf(p.ID) != p.I {
					return false, s
				}
			}
			od := ord.of(in.(Call), out.(Ret))
			if od != nil && !od.ready(st.done) {
				return false, s
			}
			ok, inner := m.Step(st.inner, in, out)
			if !ok {
				return false, s
			}
			next := st.next
			for _, p := range [2]Pos{bt.Send, bt.Recv} {
				if p.ID != 0 {
					next = advance(next, p)
				}
			}
			done := st.done
			if od != nil {
				done = od.mark(done)
			}
			return true, batchState{inner: inner, next: next, done: done}
		},
		Equal: func(a, b any) bool {
			x, y := a.(batchState), b.(batchState)
			return slices.Equal(x.next, y.next) && slices.Equal(x.done, y.done) && equal(x.inner, y.inner)
		},
		DescribeOperation: func(in, out any) string {
			return Describe(in.(Call), out.(Ret)) + batchNote(out.(Ret).Batch)
		},
		DescribeState: func(s any) string {
			st := s.(batchState)
			d := fmt.Sprint(st.inner)
			if m.DescribeState != nil {
				d = m.DescribeState(st.inner)
			}
			for _, p := range st.next {
				d += fmt.Sprintf(" #%d next %d", p.ID, p.I+1)
			}
			return d
		},
		DescribeOperationMetadata: m.DescribeOperationMetadata,
	}
	if m.Hash != nil {
		// The places and the prerequisites done are a function of the
		// operations linearized, which Porcupine hashes already.
		b.Hash = func(s any) uint64 { return m.Hash(s.(batchState).inner) }
	}
	return b
}

// hasBatches reports whether any operation of ops belongs to a batch.
func hasBatches(ops []porcupine.Operation) bool {
	for _, op := range ops {
		if !op.Output.(Ret).Batch.isZero() {
			return true
		}
	}
	return false
}

// withBatches returns m, with the batch rule if ops has batch operations.
func withBatches(m porcupine.Model, ops []porcupine.Operation) porcupine.Model {
	if hasBatches(ops) {
		return Batched(m)
	}
	return m
}

// exchangeBatch returns the places of a rendezvous exchange of send op s
// and receive op r.
func exchangeBatch(s, r porcupine.Operation) Batch {
	return Batch{Send: s.Output.(Ret).Batch.Send, Recv: r.Output.(Ret).Batch.Recv}
}

// StripBatches returns ops with every batch place removed, as if each value
// of a batch were a single call with the batch's interval: the encoding
// that accepts batches whose values took effect out of order. Tests use it
// to show that the batch rule is what rejects such a history.
func StripBatches(ops []porcupine.Operation) []porcupine.Operation {
	out := slices.Clone(ops)
	for i := range out {
		r := out[i].Output.(Ret)
		r.Batch = Batch{}
		out[i].Output = r
	}
	return out
}

// ===== The driver =====

// batchMax bounds the values of one batch step (batchValue packs the index
// into one decimal digit).
const batchMax = 8

// batchStep makes one script step in cfg.Batch of the kinds that have a
// batch form (Send, SendCtx, Recv, RecvCtx, TryRecv) a batch of 1 to
// batchMax values: mostly 2 or 3.
func batchStep(cfg Config, r *rand.Rand, st *step) {
	if cfg.Batch <= 0 {
		return
	}
	switch st.kind {
	case Send, SendCtx, Recv, RecvCtx, TryRecv:
	default:
		return
	}
	if r.IntN(cfg.Batch) != 0 {
		return
	}
	st.n = 2 + r.IntN(2)
	if r.IntN(4) == 0 {
		st.n = 1 + r.IntN(batchMax)
	}
}

// batchValue is the value at index i of the batch step whose single value
// would be v: v itself for i = 0, then v + i·100000 (steps are numbered
// client·1000000 + step + 1, steps below 100000).
func batchValue(v, i int) int { return v + i*100_000 }

// runBatch runs the batch step st with values from v.
func runBatch(c *Client[int], st step, v int) {
	switch st.kind {
	case Send, SendCtx:
		vs := make([]int, st.n)
		for i := range vs {
			vs[i] = batchValue(v, i)
		}
		if st.kind == Send {
			c.SendMany(vs)
			return
		}
		ctx, cancel := stepContext(st)
		c.SendManyContext(ctx, vs)
		cancel()
	case Recv:
		c.RecvMany(make([]int, st.n))
	case RecvCtx:
		ctx, cancel := stepContext(st)
		c.RecvManyContext(ctx, make([]int, st.n))
		cancel()
	case TryRecv:
		c.TryRecvMany(make([]int, st.n))
	}
}

// ===== Orders every linearization keeps =====
//
// A batch's values share the batch call's interval, which may be long (a
// SendMany that waited for room), and several batches may run at once.
// Porcupine then explores every interleaving of their values that the
// intervals allow, most of which a receive much later refutes: a history
// that is easy with single calls can take seconds, or time out. So for a
// buffered or unbounded channel with batch calls, Check first derives
// orders that every linearization of the history keeps (x → y: x takes
// effect before y), to a fixed point:
//
//   - a batch's values, on either side, in order (the batch rule);
//   - the send of a value → its receive;
//   - FIFO: for values a and b, both sent and received, the sends of a and
//     b are in the order of their receives, and the other way round, where
//     either order is certain (one operation returned before the other was
//     called, or an order derived already).
//
// Each x → y narrows the intervals (y's call moves up to x's, x's return
// down to y's: NarrowBatches), and where x and y still overlap the model
// makes y wait for x (orders). Neither changes the verdict:
//
//   - nothing illegal is accepted: a linearization of the narrowed,
//     ordered history is one of the original, as its intervals lie inside
//     the original ones and the model only refuses more;
//   - nothing legal is rejected: in a linearization of the original each
//     order above holds (they hold in the model of a FIFO channel whose
//     values are unique, sent once and received at most once, as in every
//     linearizable history of the driver), so it keeps the orders and puts
//     each operation inside its narrowed interval.
//
// Where the orders contradict each other (an interval would become empty)
// the history is not linearizable, and it is checked as recorded.

// valueKey names the operation that sent (side 0) or received (side 1)
// value V, for ops that sent or received one; false for others.
func valueKey(c Call, r Ret) (key [2]any, ok bool) {
	p, plain := asPlain(c, r)
	switch {
	case !plain || r.Res != OK:
		return key, false
	case p.Kind.IsSend():
		return [2]any{0, p.V}, true
	case p.Kind.IsRecv():
		return [2]any{1, r.V}, true
	}
	return key, false
}

// orders are the orders derived for one history that the intervals do not
// enforce, by the value each operation sent or received.
type orders struct {
	send, recv map[any]*ordered
}

// ordered is what the orders say of one operation: the prerequisite
// numbers of the operations it must follow, and its own number if others
// must follow it (else -1).
type ordered struct {
	after []int
	num   int
}

// of returns the orders of the operation (c, r), or nil if it has none.
func (o *orders) of(c Call, r Ret) *ordered {
	if o == nil || r.Res != OK {
		return nil
	}
	switch p, plain := asPlain(c, r); {
	case !plain:
	case p.Kind.IsSend():
		return o.send[p.V]
	case p.Kind.IsRecv():
		return o.recv[r.V]
	}
	return nil
}

// entry returns the orders of the operation named key, making them.
func (o *orders) entry(key [2]any) *ordered {
	m := o.send
	if key[0] == 1 {
		m = o.recv
	}
	e := m[key[1]]
	if e == nil {
		e = &ordered{num: -1}
		m[key[1]] = e
	}
	return e
}

// ready reports whether every operation that od must follow is done.
func (od *ordered) ready(done []uint64) bool {
	for _, j := range od.after {
		if j/64 >= len(done) || done[j/64]&(1<<(j%64)) == 0 {
			return false
		}
	}
	return true
}

// mark returns done with od marked linearized, if others follow it.
func (od *ordered) mark(done []uint64) []uint64 {
	j := od.num
	if j < 0 {
		return done
	}
	d := make([]uint64, max(len(done), j/64+1))
	copy(d, done)
	d[j/64] |= 1 << (j % 64)
	return d
}

// NarrowBatches returns ops with intervals narrowed by the orders derived
// from it (see above) if it has batch calls, and ops itself otherwise. ops
// is a history of a buffered or unbounded channel. Check uses it; it is
// exported for the tests that compare verdicts with and without it.
func NarrowBatches(ops []porcupine.Operation) []porcupine.Operation {
	narrowed, _ := deriveOrders(ops)
	return narrowed
}

// deriveOrders returns ops with narrowed intervals and the orders its
// linearizations keep that the narrowed intervals do not enforce; ops
// itself and no orders if it has no batch call or the orders contradict
// each other.
func deriveOrders(ops []porcupine.Operation) ([]porcupine.Operation, *orders) {
	if !hasBatches(ops) {
		return ops, nil
	}
	n := len(ops)
	lo, hi := make([]int64, n), make([]int64, n) // the narrowed intervals
	keys := make([][2]any, n)
	byKey := map[[2]any]int{}
	chains := map[[2]int64][]int{} // (side, batch) → operations, by place below
	for i, op := range ops {
		lo[i], hi[i] = op.Call, op.Return
		c, r := op.Input.(Call), op.Output.(Ret)
		if k, ok := valueKey(c, r); ok {
			if _, dup := byKey[k]; dup {
				return ops, nil // a value sent or received twice: illegal; check as recorded
			}
			keys[i], byKey[k] = k, i
		}
		if p := r.Batch.Send; p.ID != 0 {
			chains[[2]int64{0, p.ID}] = append(chains[[2]int64{0, p.ID}], i)
		}
		if p := r.Batch.Recv; p.ID != 0 {
			chains[[2]int64{1, p.ID}] = append(chains[[2]int64{1, p.ID}], i)
		}
	}
	// Edges x → y, certain in every linearization: a list, and a matrix of
	// bits for lookups.
	var edges [][2]int
	words := (n + 63) / 64
	adj := make([]uint64, n*words)
	has := func(x, y int) bool { return adj[x*words+y/64]&(1<<(y%64)) != 0 }
	add := func(x, y int) {
		if !has(x, y) {
			adj[x*words+y/64] |= 1 << (y % 64)
			edges = append(edges, [2]int{x, y})
		}
	}
	for key, b := range chains {
		slices.SortFunc(b, func(x, y int) int {
			bx, by := ops[x].Output.(Ret).Batch, ops[y].Output.(Ret).Batch
			if key[0] == 0 {
				return bx.Send.I - by.Send.I
			}
			return bx.Recv.I - by.Recv.I
		})
		for j := 1; j < len(b); j++ {
			add(b[j-1], b[j])
		}
	}
	type pair struct{ s, r int } // the send and the receive of one value
	var pairs []pair
	for i, k := range keys {
		if k[0] == 1 {
			if s, ok := byKey[[2]any{0, k[1]}]; ok {
				pairs = append(pairs, pair{s, i})
				add(s, i)
			}
		}
	}
	before := func(x, y int) bool { return hi[x] < lo[y] || has(x, y) }
	// FIFO can order two sends only where their intervals overlap (else the
	// intervals order them already, or contradict the receives, which
	// Porcupine finds), and two receives likewise; intervals only narrow,
	// so the candidates are the pairs whose recorded intervals overlap.
	overlapping := func(op func(pair) int) [][2]pair {
		byLo := slices.Clone(pairs)
		slices.SortFunc(byLo, func(a, b pair) int { return int(lo[op(a)] - lo[op(b)]) })
		var c [][2]pair
		for i, a := range byLo {
			for _, b := range byLo[i+1:] {
				if lo[op(b)] > hi[op(a)] {
					break
				}
				c = append(c, [2]pair{a, b})
			}
		}
		return c
	}
	sendsMeet := overlapping(func(p pair) int { return p.s })
	recvsMeet := overlapping(func(p pair) int { return p.r })
	// order adds x → y where before(u, v) says so and the intervals do not.
	order := func(u, v, x, y int) bool {
		if before(u, v) && hi[x] >= lo[y] && !has(x, y) {
			add(x, y)
			return true
		}
		return false
	}
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			x, y := e[0], e[1]
			if lo[y] < lo[x] {
				lo[y], changed = lo[x], true
			}
			if hi[x] > hi[y] {
				hi[x], changed = hi[y], true
			}
		}
		for _, m := range sendsMeet {
			a, b := m[0], m[1]
			changed = order(a.r, b.r, a.s, b.s) || changed
			changed = order(b.r, a.r, b.s, a.s) || changed
		}
		for _, m := range recvsMeet {
			a, b := m[0], m[1]
			changed = order(a.s, b.s, a.r, b.r) || changed
			changed = order(b.s, a.s, b.r, a.r) || changed
		}
		for i := range lo {
			if lo[i] > hi[i] {
				return ops, nil // contradictory: not linearizable; Porcupine says so
			}
		}
	}
	out := slices.Clone(ops)
	for i := range out {
		out[i].Call, out[i].Return = lo[i], hi[i]
	}
	// The model enforces the edges between operations that still overlap
	// and are both keyed (the batch rule enforces the others).
	ord := &orders{send: map[any]*ordered{}, recv: map[any]*ordered{}}
	nums := 0
	for _, e := range edges {
		x, y := e[0], e[1]
		if hi[x] < lo[y] || keys[x][0] == nil || keys[y][0] == nil {
			continue
		}
		px := ord.entry(keys[x])
		if px.num < 0 {
			px.num = nums
			nums++
		}
		py := ord.entry(keys[y])
		py.after = append(py.after, px.num)
	}
	if nums == 0 {
		ord = nil
	}
	return out, ord
}

// checkedBatches returns the model and the history for Porcupine to check
// ops of a buffered or unbounded channel with: m and ops if ops has no
// batch call, else m with the batch rule and the derived orders, and ops
// with narrowed intervals.
func checkedBatches(m porcupine.Model, ops []porcupine.Operation) (porcupine.Model, []porcupine.Operation) {
	if !hasBatches(ops) {
		return m, ops
	}
	narrowed, ord := deriveOrders(ops)
	return batched(m, ord), narrowed
}
