// Package linz records concurrent histories of channel operations and checks
// them for linearizability against small sequential specifications.
//
// A History hands out one Client per goroutine. A Client wraps anything with
// the channel's method set (a Chan[T], a Handle[T], a reference channel or a
// mutant) and records, for every call, the operation, its input and output,
// and call and return timestamps read from the History's one atomic clock.
// Check then asks Porcupine whether some order of the operations, each placed
// between its own call and return, is a legal run of the sequential model for
// the channel's capacity (see model.go), or, for rendezvous channels, runs the
// pairing check of rendezvous.go.
//
// The package does not import the channel it checks: it speaks only the Ops
// and Chan interfaces, so that the reference channel, its mutants and the
// real channel are checked by the same code.
package linz

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// Ops is the operation set that a channel and its handles share.
type Ops[T any] interface {
	Send(v T) error
	SendContext(ctx context.Context, v T) error
	TrySend(v T) error
	Recv() (v T, ok bool)
	RecvContext(ctx context.Context) (T, error)
	TryRecv() (T, error)
}

// Chan is Ops plus the methods that act on the whole channel.
type Chan[T any] interface {
	Ops[T]
	Close() error
	Len() int
	Cap() int
}

// Errors names the sentinel errors of the channel under test, so that results
// can be classified without importing it.
type Errors struct {
	Closed, Full, Empty error
}

// Kind is the operation of a recorded call.
type Kind uint8

// The operations. The Ctx variants are the context-taking ones.
const (
	Send Kind = iota
	SendCtx
	TrySend
	Recv
	RecvCtx
	TryRecv
	Close
	Len
	// A select over two cases on the one channel: send Call.V, and
	// receive. Ret.Case says which committed.
	Select
	SelectCtx
	TrySelect
	// SelectTimeout is a select over the same two cases and a third that
	// fires on its own: a timeout, or a done channel that is closed. Its
	// firing is recorded as the select returning no value (Res TimedOut).
	SelectTimeout
)

var kindNames = [...]string{"Send", "SendCtx", "TrySend", "Recv", "RecvCtx", "TryRecv", "Close", "Len", "Select", "SelectCtx", "TrySelect", "SelectTimeout"}

func (k Kind) String() string {
	if k == Exchange {
		return "Exchange"
	}
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// IsSend reports whether k is one of the three send operations.
func (k Kind) IsSend() bool { return k <= TrySend }

// IsRecv reports whether k is one of the three receive operations.
func (k Kind) IsRecv() bool { return k >= Recv && k <= TryRecv }

// IsSelect reports whether k is one of the select operations.
func (k Kind) IsSelect() bool { return k >= Select && k <= SelectTimeout }

// Case values of Ret for selects.
const (
	CaseNone = -1 // no case committed: TrySelect found none ready, ctx, or a timeout or done case
	CaseSend = 0
	CaseRecv = 1
)

// asPlain returns the plain operation a select took effect as, judged by
// the case that committed, and false if no case did.
func asPlain(c Call, r Ret) (Call, bool) {
	switch {
	case !c.Kind.IsSelect():
		return c, true
	case r.Case == CaseSend:
		return Call{Kind: Send, V: c.V}, true
	case r.Case == CaseRecv:
		return Call{Kind: Recv}, true
	}
	return c, false
}

// sendOK reports whether op is a send (or a select's send case) that
// reported success.
func sendOK(op porcupine.Operation) bool {
	c, ok := asPlain(op.Input.(Call), op.Output.(Ret))
	return ok && c.Kind.IsSend() && op.Output.(Ret).Res == OK
}

// recvOK reports whether op is a receive (or a select's receive case) that
// got a value.
func recvOK(op porcupine.Operation) bool {
	c, ok := asPlain(op.Input.(Call), op.Output.(Ret))
	return ok && c.Kind.IsRecv() && op.Output.(Ret).Res == OK
}

// nonBlocking reports whether op's kind never waits for a partner.
func nonBlocking(k Kind) bool { return k == TrySend || k == TryRecv || k == TrySelect }

// Res classifies the result of a call.
type Res uint8

// The results. Canceled stands for the context's error (Canceled or
// DeadlineExceeded); Other for any error the channel must never return;
// TimedOut for a SelectTimeout whose timeout or done case committed.
const (
	OK Res = iota
	Closed
	Full
	Empty
	Canceled
	Other
	TimedOut
)

var resNames = [...]string{"ok", "closed", "full", "empty", "canceled", "OTHER", "timeout"}

func (r Res) String() string {
	if int(r) < len(resNames) {
		return resNames[r]
	}
	return fmt.Sprintf("Res(%d)", uint8(r))
}

// Call is the Input of a recorded porcupine.Operation.
type Call struct {
	Kind Kind
	V    any // the value sent; nil for other operations
}

// Ret is the Output of a recorded porcupine.Operation.
type Ret struct {
	Res  Res
	V    any    // the value received, when Res is OK
	N    int    // the answer of Len
	Case int    // for selects: CaseNone, CaseSend or CaseRecv
	Err  string // the text of an unexpected error (Res == Other)
	// Batch is the operation's place in a batch call (batch.go); zero for
	// a single call.
	Batch Batch
}

// History collects the calls of a set of clients against one channel. Its
// clock is a single atomic counter, so that the timestamps of all clients
// are totally ordered and no two events share one.
type History struct {
	errs  Errors
	clock atomic.Int64

	mu      sync.Mutex
	clients []*clientLog
}

type clientLog struct {
	id  int
	ops []porcupine.Operation
}

// NewHistory returns an empty history whose results are classified by errs.
func NewHistory(errs Errors) *History { return &History{errs: errs} }

// Client is a recording wrapper around one goroutine's access path to a
// channel. Its methods call through to the wrapped Ops (or Chan, for Close
// and Len) and record the call. A Client must be used by one goroutine at a
// time, like a Handle.
type Client[T any] struct {
	h   *History
	log *clientLog
	ops Ops[T]
	ch  Chan[T]
}

// NewClient returns a new client of h, numbered after the clients before it,
// that sends and receives through ops and closes and measures ch. ch may be
// nil if the client never calls Close or Len.
func NewClient[T any](h *History, ops Ops[T], ch Chan[T]) *Client[T] {
	h.mu.Lock()
	l := &clientLog{id: len(h.clients)}
	h.clients = append(h.clients, l)
	h.mu.Unlock()
	return &Client[T]{h: h, log: l, ops: ops, ch: ch}
}

// ID returns the client's number, its ClientId in the recorded operations.
func (c *Client[T]) ID() int { return c.log.id }

// Count returns the number of operations recorded so far by c.
func (c *Client[T]) Count() int { return len(c.log.ops) }

func (c *Client[T]) begin() int64 { return c.h.clock.Add(1) }

func (c *Client[T]) end(call int64, in Call, out Ret) {
	ret := c.h.clock.Add(1)
	c.log.ops = append(c.log.ops, porcupine.Operation{
		ClientId: c.log.id,
		Input:    in,
		Call:     call,
		Output:   out,
		Return:   ret,
	})
}

func (c *Client[T]) classify(err error) Ret {
	e := c.h.errs
	switch {
	case err == nil:
		return Ret{Res: OK}
	case err == e.Closed:
		return Ret{Res: Closed}
	case err == e.Full:
		return Ret{Res: Full}
	case err == e.Empty:
		return Ret{Res: Empty}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return Ret{Res: Canceled}
	}
	return Ret{Res: Other, Err: err.Error()}
}

// Send records ops.Send(v).
func (c *Client[T]) Send(v T) error {
	t := c.begin()
	err := c.ops.Send(v)
	c.end(t, Call{Send, v}, c.classify(err))
	return err
}

// SendContext records ops.SendContext(ctx, v).
func (c *Client[T]) SendContext(ctx context.Context, v T) error {
	t := c.begin()
	err := c.ops.SendContext(ctx, v)
	c.end(t, Call{SendCtx, v}, c.classify(err))
	return err
}

// TrySend records ops.TrySend(v).
func (c *Client[T]) TrySend(v T) error {
	t := c.begin()
	err := c.ops.TrySend(v)
	c.end(t, Call{TrySend, v}, c.classify(err))
	return err
}

// Recv records ops.Recv().
func (c *Client[T]) Recv() (T, bool) {
	t := c.begin()
	v, ok := c.ops.Recv()
	r := Ret{Res: Closed}
	if ok {
		r = Ret{Res: OK, V: v}
	}
	c.end(t, Call{Kind: Recv}, r)
	return v, ok
}

// RecvContext records ops.RecvContext(ctx).
func (c *Client[T]) RecvContext(ctx context.Context) (T, error) {
	t := c.begin()
	v, err := c.ops.RecvContext(ctx)
	r := c.classify(err)
	if r.Res == OK {
		r.V = v
	}
	c.end(t, Call{Kind: RecvCtx}, r)
	return v, err
}

// TryRecv records ops.TryRecv().
func (c *Client[T]) TryRecv() (T, error) {
	t := c.begin()
	v, err := c.ops.TryRecv()
	r := c.classify(err)
	if r.Res == OK {
		r.V = v
	}
	c.end(t, Call{Kind: TryRecv}, r)
	return v, err
}

// Close records ch.Close().
func (c *Client[T]) Close() error {
	t := c.begin()
	err := c.ch.Close()
	c.end(t, Call{Kind: Close}, c.classify(err))
	return err
}

// Len records ch.Len().
func (c *Client[T]) Len() int {
	t := c.begin()
	n := c.ch.Len()
	c.end(t, Call{Kind: Len}, Ret{Res: OK, N: n})
	return n
}

// SelectFunc runs a select over two cases on one channel, sending v and
// receiving: a TrySelect if block is false, else a SelectContext if ctx is
// not nil, else a Select. It reports the committed case (CaseNone, CaseSend
// or CaseRecv), the received value and ok for CaseRecv, and the send's error
// for CaseSend or the select's own error (the context's) for CaseNone.
type SelectFunc[T any] func(ctx context.Context, v T, block bool) (which int, got T, ok bool, err error)

// Select records sel(ctx, v, block).
func (c *Client[T]) Select(sel SelectFunc[T], ctx context.Context, v T, block bool) {
	kind := Select
	switch {
	case !block:
		kind = TrySelect
	case ctx != nil:
		kind = SelectCtx
	}
	t := c.begin()
	which, got, ok, err := sel(ctx, v, block)
	c.end(t, Call{Kind: kind, V: v}, c.selectRet(which, got, ok, err, Empty))
}

// selectRet is the result of a select that committed case which (CaseSend,
// CaseRecv, or anything else for none), where none is the result when no
// case took effect.
func (c *Client[T]) selectRet(which int, got T, ok bool, err error, none Res) Ret {
	var r Ret
	switch which {
	case CaseSend:
		r = c.classify(err)
	case CaseRecv:
		r = Ret{Res: Closed}
		if ok {
			r = Ret{Res: OK, V: got}
		}
		if err != nil {
			r = c.classify(err)
		}
	default:
		which = CaseNone
		r = Ret{Res: none}
		if err != nil {
			r = c.classify(err)
		}
	}
	r.Case = which
	return r
}

// TimeoutSelectFunc runs a select over three cases: sending v and
// receiving on one channel, and a case that fires on its own, a timeout of
// d if done is nil, else the closing of done. It reports the committed
// case as SelectFunc does, with CaseNone for the third case.
type TimeoutSelectFunc[T any] func(v T, d time.Duration, done <-chan struct{}) (which int, got T, ok bool, err error)

// SelectTimeout records sel(v, d, done) as a SelectTimeout.
func (c *Client[T]) SelectTimeout(sel TimeoutSelectFunc[T], v T, d time.Duration, done <-chan struct{}) {
	t := c.begin()
	which, got, ok, err := sel(v, d, done)
	c.end(t, Call{Kind: SelectTimeout, V: v}, c.selectRet(which, got, ok, err, TimedOut))
}

// Cap returns ch.Cap() without recording it: the capacity never changes.
func (c *Client[T]) Cap() int { return c.ch.Cap() }

// Operations returns every operation recorded so far, ordered by call time.
// Call it only once every client has returned from its last call.
func (h *History) Operations() []porcupine.Operation {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []porcupine.Operation
	for _, l := range h.clients {
		all = append(all, l.ops...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Call < all[j].Call })
	return all
}

// Clients returns the number of clients of h.
func (h *History) Clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}
