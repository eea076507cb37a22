package chans_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/scalable-go/chans"
)

// FuzzSequential decodes its input into one goroutine's sequence of
// operations and runs it against every channel kind and against a plain
// sequential model (a slice queue and a closed flag), comparing every
// result. Operations that would block are left out (Send only with room or
// after Close, Recv only with something buffered or after Close), so a run
// never waits. Each input byte is one operation: the low bits pick it (see
// seqOp), the top bit sends it through a Handle instead of the Chan.
//
// The seeds under testdata/fuzz/FuzzSequential run with every go test; run
// go test -fuzz FuzzSequential -run '^$' . to search further.
func FuzzSequential(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 1, 8, 1, 1})
	f.Add([]byte{2, 2, 2, 9, 3, 3, 9, 8, 3, 3, 11})
	f.Add([]byte{0, 0, 0, 0, 5, 7, 4, 6, 8, 5, 6, 7, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			data = data[:4096]
		}
		for _, k := range seqKinds {
			if err := runSequential(k, data); err != nil {
				t.Fatalf("%s: %v\nops: %v", linzKindName(k), err, seqDescribe(data))
			}
		}
	})
}

// seqKinds are the capacities FuzzSequential runs: rendezvous, small
// buffers, the block of the segment layout (64 cells) ± 1, half of it, the
// segment size (256 in normal builds), and unbounded.
var seqKinds = []int{0, 1, 2, 3, 63, 64, 65, 32, 256, chans.Unbounded}

// seqOp names the operations of one input byte (b & 0x7f % len).
var seqOp = []string{
	"TrySend", "TryRecv", "Send", "Recv", "SendContext(live)", "SendContext(done)",
	"RecvContext(live)", "RecvContext(done)", "Close", "Len", "Cap", "All", "TrySend×5",
}

func seqDescribe(data []byte) []string {
	s := make([]string, len(data))
	for i, b := range data {
		s[i] = seqOp[int(b&0x7f)%len(seqOp)]
		if b&0x80 != 0 {
			s[i] += "@h"
		}
	}
	return s
}

// seqModel is the sequential specification: FIFO queue q of capacity k
// (k < 0 unbounded, 0 rendezvous: no room ever, as nobody else receives),
// closed flag.
type seqModel struct {
	k      int
	q      []int
	closed bool
}

func (m *seqModel) room() bool { return m.k < 0 || len(m.q) < m.k }

func (m *seqModel) pop() int {
	v := m.q[0]
	m.q = m.q[1:]
	return v
}

func runSequential(k int, data []byte) error {
	c := chans.New[int](k)
	h := c.Handle()
	m := &seqModel{k: k}
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	next := 0
	val := func() int { next++; return next }

	for i, b := range data {
		var ops interface {
			Send(int) error
			SendContext(context.Context, int) error
			TrySend(int) error
			Recv() (int, bool)
			RecvContext(context.Context) (int, error)
			TryRecv() (int, error)
		} = c
		if b&0x80 != 0 {
			ops = h
		}
		op := int(b&0x7f) % len(seqOp)
		fail := func(format string, args ...any) error {
			return fmt.Errorf("op %d %s (queue %v, closed %v): %s", i, seqOp[op], m.q, m.closed, fmt.Sprintf(format, args...))
		}
		// wantSend checks a send's error against the model and applies it.
		wantSend := func(v int, err error) error {
			switch {
			case m.closed:
				if err != chans.ErrClosed {
					return fail("got %v, want ErrClosed", err)
				}
			case m.room():
				if err != nil {
					return fail("got %v, want nil", err)
				}
				m.q = append(m.q, v)
			default:
				return fail("model error: send would block")
			}
			return nil
		}
		wantRecv := func(v int, err error) error {
			switch {
			case len(m.q) > 0:
				if w := m.pop(); err != nil || v != w {
					return fail("got (%v, %v), want (%v, nil)", v, err, w)
				}
			case m.closed:
				if err != chans.ErrClosed {
					return fail("got (%v, %v), want ErrClosed", v, err)
				}
			default:
				return fail("model error: receive would block")
			}
			return nil
		}
		var err error
		switch seqOp[op] {
		case "TrySend":
			v := val()
			e := ops.TrySend(v)
			if !m.closed && !m.room() {
				if e != chans.ErrFull {
					err = fail("got %v, want ErrFull", e)
				}
				break
			}
			err = wantSend(v, e)
		case "TrySend×5":
			for range 5 {
				v := val()
				e := ops.TrySend(v)
				if !m.closed && !m.room() {
					if e != chans.ErrFull {
						err = fail("got %v, want ErrFull", e)
					}
					break
				}
				if err = wantSend(v, e); err != nil {
					break
				}
			}
		case "TryRecv":
			v, e := ops.TryRecv()
			if len(m.q) == 0 && !m.closed {
				if e != chans.ErrEmpty {
					err = fail("got (%v, %v), want ErrEmpty", v, e)
				}
				break
			}
			err = wantRecv(v, e)
		case "Send":
			if m.closed || m.room() {
				v := val()
				err = wantSend(v, ops.Send(v))
			}
		case "Recv":
			if len(m.q) > 0 || m.closed {
				v, ok := ops.Recv()
				var e error
				if !ok {
					e = chans.ErrClosed
				}
				err = wantRecv(v, e)
			}
		case "SendContext(live)":
			v := val()
			if m.closed || m.room() {
				err = wantSend(v, ops.SendContext(live, v))
				break
			}
			// It would block: with a done context it must give up at once.
			if e := ops.SendContext(done, v); !errors.Is(e, context.Canceled) {
				err = fail("blocked send with done context: got %v, want context.Canceled", e)
			}
		case "SendContext(done)":
			// A done context may win even where the send could proceed;
			// whatever it reports must have been its effect.
			v := val()
			e := ops.SendContext(done, v)
			switch {
			case errors.Is(e, context.Canceled):
			case !m.closed && !m.room():
				err = fail("got %v, want context.Canceled", e)
			default:
				err = wantSend(v, e)
			}
		case "RecvContext(live)":
			if len(m.q) > 0 || m.closed {
				err = wantRecv(ops.RecvContext(live))
				break
			}
			if v, e := ops.RecvContext(done); !errors.Is(e, context.Canceled) {
				err = fail("blocked receive with done context: got (%v, %v), want context.Canceled", v, e)
			}
		case "RecvContext(done)":
			v, e := ops.RecvContext(done)
			switch {
			case errors.Is(e, context.Canceled):
			case len(m.q) == 0 && !m.closed:
				err = fail("got (%v, %v), want context.Canceled", v, e)
			default:
				err = wantRecv(v, e)
			}
		case "Close":
			e := c.Close()
			if m.closed && e != chans.ErrClosed {
				err = fail("second Close: got %v, want ErrClosed", e)
			} else if !m.closed && e != nil {
				err = fail("got %v, want nil", e)
			}
			m.closed = true
		case "Len":
			if n := c.Len(); n != len(m.q) {
				err = fail("got %d, want %d", n, len(m.q))
			}
		case "Cap":
			if n := c.Cap(); n != k {
				err = fail("got %d, want %d", n, k)
			}
		case "All":
			if len(m.q) == 0 && !m.closed {
				break // the iterator would block
			}
			n, broke := 0, false
			for v := range c.All() {
				if len(m.q) == 0 {
					err = fail("yielded %v past the end", v)
					broke = true
					break
				}
				if w := m.pop(); v != w {
					err = fail("yielded %v, want %v", v, w)
					broke = true
					break
				}
				n++
				if n == 2 || (len(m.q) == 0 && !m.closed) {
					broke = true
					break
				}
			}
			if err == nil && !broke && (len(m.q) > 0 || !m.closed) {
				err = fail("iteration ended early")
			}
		}
		if err == nil {
			err = chans.CheckInvariants(c) // one goroutine: every step ends quiescent
		}
		if err != nil {
			return err
		}
	}
	// Drain: Close, then every value left must come out in order.
	c.Close()
	for _, w := range m.q {
		if v, err := c.TryRecv(); err != nil || v != w {
			return fmt.Errorf("drain: got (%v, %v), want (%v, nil)", v, err, w)
		}
	}
	if v, err := c.TryRecv(); err != chans.ErrClosed {
		return fmt.Errorf("drain: got (%v, %v) after the last value, want ErrClosed", v, err)
	}
	if v, ok := c.Recv(); ok {
		return fmt.Errorf("drain: Recv got %v after the last value", v)
	}
	return chans.CheckInvariants(c)
}
