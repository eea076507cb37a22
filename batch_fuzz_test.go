package chans_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/scalable-go/chans"
)

// FuzzBatch decodes its input into one goroutine's sequence of batch and
// single operations and runs it against every kind in seqKinds and against
// the slice model of FuzzSequential (seqModel), comparing every count,
// value and error. Each operation is one byte, whose low bits pick it
// (batchFuzzOps) and whose top bit sends it through a Handle instead of the
// Chan; a batch operation takes its size from the next byte (size byte %
// 72: empty, small, and larger than a small buffer, or than a segment in
// chans_smallseg builds). Calls that
// would block are left out, or made with a done context instead (the
// "live" Context variants).
//
// With one goroutine nothing is in flight, so the batch operations are
// exact:
//   - SendMany of k values with room for them, or on a closed channel,
//     returns (k, nil) or (0, ErrClosed); with a done context it sends what
//     fits, min(k, room), and reports ctx.Err() if that is not all;
//   - RecvMany, RecvManyContext and TryRecvMany take every buffered value
//     that fits, min(k, len(q)), in order, and write nothing past them;
//     with nothing buffered they report ErrClosed once closed, ErrEmpty
//     (TryRecvMany) or ctx.Err() (done context);
//   - an empty batch returns (0, nil), open or closed;
//   - chans.CheckInvariants holds after every operation, and a final Close
//     and drain return exactly the model's queue.
//
// The seeds under testdata/fuzz/FuzzBatch run with every go test; run
// go test -fuzz FuzzBatch -run '^$' . to search further.
func FuzzBatch(f *testing.F) {
	// Fill with SendMany, take with TryRecvMany and RecvMany, close, drain.
	f.Add([]byte{8, 5, 14, 2, 11, 3, 0, 1, 6, 11, 9, 14, 1})
	// Batches larger than small buffers (and two-cell segments), with done
	// contexts, through the Handle.
	f.Add([]byte{10, 70, 13, 40, 0x80 | 8, 33, 0x80 | 14, 65, 12, 1, 9, 64, 6, 10, 3})
	// Empty batches, open and closed; singles in between.
	f.Add([]byte{8, 0, 11, 0, 14, 0, 0, 0, 1, 6, 8, 0, 13, 0, 8, 2, 14, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 2048 {
			data = data[:2048]
		}
		for _, k := range seqKinds {
			if err := runBatchFuzz(k, data); err != nil {
				t.Fatalf("%s: %v\nops: %v", linzKindName(k), err, batchFuzzDescribe(data))
			}
		}
	})
}

// batchFuzzMaxQueue bounds the values an unbounded channel holds in
// FuzzBatch: sends that would pass it are left out.
const batchFuzzMaxQueue = 1000

// batchFuzzOps names the operations of one input byte (b & 0x7f % len).
var batchFuzzOps = []string{
	"TrySend", "TryRecv", "Send", "Recv", "SendContext(done)", "RecvContext(done)", "Close", "Len",
	"SendMany", "SendManyContext(live)", "SendManyContext(done)",
	"RecvMany", "RecvManyContext(live)", "RecvManyContext(done)", "TryRecvMany",
}

// batchFuzzStep decodes the operation at data[i]: its name, whether it goes
// through the Handle, its size (batch operations) and the index of the next
// operation.
func batchFuzzStep(data []byte, i int) (name string, handle bool, size, next int) {
	b := data[i]
	name = batchFuzzOps[int(b&0x7f)%len(batchFuzzOps)]
	next = i + 1
	if isBatchOp(name) {
		size = 1
		if next < len(data) {
			size = int(data[next]) % 72
			next++
		}
	}
	return name, b&0x80 != 0, size, next
}

func isBatchOp(name string) bool { return strings.Contains(name, "Many") }

func batchFuzzDescribe(data []byte) []string {
	var s []string
	for i := 0; i < len(data); {
		name, handle, size, next := batchFuzzStep(data, i)
		if isBatchOp(name) {
			name += fmt.Sprintf("[%d]", size)
		}
		if handle {
			name += "@h"
		}
		s = append(s, name)
		i = next
	}
	return s
}

func runBatchFuzz(k int, data []byte) error {
	c := chans.New[int](k)
	h := c.Handle()
	m := &seqModel{k: k}
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	next := 0
	vals := func(n int) []int {
		vs := make([]int, n)
		for i := range vs {
			next++
			vs[i] = next
		}
		return vs
	}
	room := func() int { // values that fit now
		switch {
		case m.k < 0:
			return batchFuzzMaxQueue
		case m.k == 0:
			return 0
		}
		return m.k - len(m.q)
	}
	dst := make([]int, 80)

	for i, step := 0, 0; i < len(data); step++ {
		name, handle, size, nexti := batchFuzzStep(data, i)
		i = nexti
		var o batchOps = c
		if handle {
			o = h
		}
		fail := func(format string, args ...any) error {
			return fmt.Errorf("op %d %s (size %d, queue %v, closed %v): %s", step, name, size, m.q, m.closed, fmt.Sprintf(format, args...))
		}
		// wantSendMany checks a send batch of vs that returned (n, err)
		// and applies it: with ctxErr nil it must not have had to wait.
		wantSendMany := func(vs []int, n int, err, ctxErr error) error {
			var wn int
			var werr error
			switch {
			case len(vs) == 0:
			case m.closed:
				werr = chans.ErrClosed
			case room() >= len(vs):
				wn = len(vs)
			case ctxErr == nil:
				return fail("model error: the send batch would block")
			default:
				wn, werr = room(), ctxErr
			}
			if n != wn || err != werr {
				return fail("got (%d, %v), want (%d, %v)", n, err, wn, werr)
			}
			m.q = append(m.q, vs[:n]...)
			return nil
		}
		// wantRecvMany checks a receive batch into dst[:size] that
		// returned (n, err): every buffered value that fits, in order;
		// with none, ErrClosed once closed, else emptyErr.
		wantRecvMany := func(n int, err, emptyErr error) error {
			var wn int
			var werr error
			switch {
			case size == 0:
			case len(m.q) > 0:
				wn = min(size, len(m.q))
			case m.closed:
				werr = chans.ErrClosed
			case emptyErr == nil:
				return fail("model error: the receive batch would block")
			default:
				werr = emptyErr
			}
			if n != wn || err != werr {
				return fail("got (%d, %v), want (%d, %v)", n, err, wn, werr)
			}
			if !slices.Equal(dst[:n], m.q[:n]) {
				return fail("received %v, want %v", dst[:n], m.q[:n])
			}
			if j := slices.IndexFunc(dst[n:size], func(v int) bool { return v != batchEnd }); j >= 0 {
				return fail("returned %d values but wrote %d into dst[%d]", n, dst[n+j], n+j)
			}
			m.q = m.q[n:]
			return nil
		}
		for j := range dst {
			dst[j] = batchEnd
		}
		if m.k < 0 && strings.Contains(name, "Send") && len(m.q)+max(size, 1) > batchFuzzMaxQueue {
			continue // keep an unbounded channel's queue, and the invariant checks, small
		}
		var err error
		switch name {
		case "TrySend":
			vs := vals(1)
			e := o.TrySend(vs[0])
			switch {
			case !m.closed && room() == 0:
				if e != chans.ErrFull {
					err = fail("got %v, want ErrFull", e)
				}
			default:
				n := 0
				if e == nil {
					n = 1
				}
				err = wantSendMany(vs, n, e, nil)
			}
		case "Send":
			if m.closed || room() > 0 {
				vs := vals(1)
				e := o.Send(vs[0])
				n := 0
				if e == nil {
					n = 1
				}
				err = wantSendMany(vs, n, e, nil)
			}
		case "SendContext(done)":
			vs := vals(1)
			e := o.SendContext(done, vs[0])
			switch {
			case e == context.Canceled && (m.closed || room() > 0):
				// A done context may win where the send could proceed
				// (as FuzzSequential allows); then nothing was sent.
			default:
				n := 0
				if e == nil {
					n = 1
				}
				err = wantSendMany(vs, n, e, context.Canceled)
			}
		case "TryRecv", "Recv", "RecvContext(done)":
			if name == "Recv" && len(m.q) == 0 && !m.closed {
				break // it would block
			}
			size = 1 // checked as a receive batch of one
			var e error
			emptyErr := error(chans.ErrEmpty)
			switch name {
			case "TryRecv":
				dst[0], e = o.TryRecv()
			case "Recv":
				var ok bool
				if dst[0], ok = o.Recv(); !ok {
					e = chans.ErrClosed
				}
			default:
				dst[0], e = o.RecvContext(done)
				emptyErr = context.Canceled
			}
			if e != nil {
				if dst[0] != 0 {
					err = fail("got (%d, %v): a value with an error", dst[0], e)
					break
				}
				dst[0] = batchEnd
			}
			if name == "RecvContext(done)" && e == context.Canceled && (len(m.q) > 0 || m.closed) {
				break // a done context may win (as FuzzSequential allows); nothing was taken
			}
			n := 0
			if e == nil {
				n = 1
			}
			err = wantRecvMany(n, e, emptyErr)
		case "Close":
			e := c.Close()
			if m.closed && e != chans.ErrClosed || !m.closed && e != nil {
				err = fail("got %v (closed before: %v)", e, m.closed)
			}
			m.closed = true
		case "Len":
			if n := c.Len(); n != len(m.q) {
				err = fail("got %d, want %d", n, len(m.q))
			}
		case "SendMany":
			if size == 0 || m.closed || room() >= size {
				vs := vals(size)
				n, e := o.SendMany(vs)
				err = wantSendMany(vs, n, e, nil)
			}
		case "SendManyContext(live)", "SendManyContext(done)":
			vs := vals(size)
			ctx := live
			if name == "SendManyContext(done)" || (size > 0 && !m.closed && room() < size) {
				ctx = done // a live context would block
			}
			n, e := o.SendManyContext(ctx, vs)
			err = wantSendMany(vs, n, e, ctx.Err())
		case "RecvMany":
			if size == 0 || len(m.q) > 0 || m.closed {
				n, e := o.RecvMany(dst[:size])
				err = wantRecvMany(n, e, nil)
			}
		case "RecvManyContext(live)", "RecvManyContext(done)":
			ctx := live
			if name == "RecvManyContext(done)" || (size > 0 && len(m.q) == 0 && !m.closed) {
				ctx = done // a live context would block
			}
			n, e := o.RecvManyContext(ctx, dst[:size])
			err = wantRecvMany(n, e, ctx.Err())
		case "TryRecvMany":
			n, e := o.TryRecvMany(dst[:size])
			err = wantRecvMany(n, e, chans.ErrEmpty)
		}
		if err == nil {
			err = chans.CheckInvariants(c) // one goroutine: every step ends quiescent
		}
		if err != nil {
			return err
		}
	}
	// Drain: Close, then the model's queue in order, seven at a time.
	c.Close()
	for len(m.q) > 0 {
		n, err := c.RecvMany(dst[:7])
		if w := min(7, len(m.q)); err != nil || n != w || !slices.Equal(dst[:n], m.q[:w]) {
			return fmt.Errorf("drain: got (%d, %v) %v, want %v", n, err, dst[:n], m.q[:w])
		}
		m.q = m.q[n:]
	}
	if n, err := c.TryRecvMany(dst[:3]); n != 0 || err != chans.ErrClosed {
		return fmt.Errorf("drain: TryRecvMany after the last value = (%d, %v), want (0, ErrClosed)", n, err)
	}
	if n, err := h.RecvMany(dst[:3]); n != 0 || err != chans.ErrClosed {
		return fmt.Errorf("drain: RecvMany after the last value = (%d, %v), want (0, ErrClosed)", n, err)
	}
	return chans.CheckInvariants(c)
}
