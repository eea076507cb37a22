package chans_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/sched"
)

// Conservation stress for the batch operations. Producers send unique
// values (producer in the high bits, sequence number in the low) with a
// random mix of Send, SendContext, TrySend, SendMany and SendManyContext;
// consumers take them with Recv, RecvContext, TryRecv, RecvMany,
// RecvManyContext and TryRecvMany. Each goroutine holds the Chan and a
// Handle of its own and picks one of them for every call, so that batch and
// single operations, and both access paths, mix in one goroutine. Contexts
// are live, done already, cancelled as the call starts to wait (cancelSoon)
// or cancelled by a canceller goroutine at some moment; in some shapes
// goroutines race to Close while values are in flight.
//
// Checks, whatever the interleaving:
//   - results have the documented shapes: SendMany returns (len(vs), nil)
//     or (n < len(vs), err); RecvMany and RecvManyContext return (n ≥ 1,
//     nil) or (0, err) with n ≤ len(dst) and nothing written past dst[n]
//     (a cancelled RecvManyContext took nothing); an empty dst gives (0,
//     nil); errors are the documented sentinels or ctx.Err(), unwrapped;
//   - every value is received at most once; every value whose send
//     reported success (for SendMany: vs[:n]) is received exactly once once
//     the channel is drained; no value whose send failed (vs[n:]) is ever
//     received;
//   - per-producer order at every consumer: the values of one producer
//     arrive at each consumer in increasing order (so a batch keeps its
//     order, on both sides, and batch and single operations of one
//     goroutine stay in program order);
//   - after a Close returned, sends fail with ErrClosed; after a receive
//     reported closed and drained, receives report it too; exactly one
//     Close returns nil;
//   - after the drain Len is 0, TryRecvMany reports ErrClosed and
//     chans.CheckInvariants holds.
//
// Built with -tags chans_smallseg,chans_perturb, segments have two cells
// (every batch of a few values crosses segments) and the protocols yield at
// random between their atomic steps:
//
//	go test -race -tags chans_smallseg,chans_perturb -run BatchStress .

// batchShape is one configuration of a batch stress run.
type batchShape struct {
	name                 string
	producers, consumers int
	closers              int  // goroutines racing to Close; 0: Close once the producers are done
	cancel               bool // contexts get cancelled (done, cancel-soon, canceller)
	maxBatch             int  // batch sizes up to this; small ones are more likely
}

var batchShapes = []batchShape{
	{name: "plain", producers: 2, consumers: 2, maxBatch: 70},
	{name: "cancel", producers: 3, consumers: 3, cancel: true, maxBatch: 9},
	{name: "close-race", producers: 3, consumers: 2, closers: 2, cancel: true, maxBatch: 70},
	{name: "many-to-one", producers: 4, consumers: 1, closers: 1, cancel: true, maxBatch: 5},
	{name: "one-to-many", producers: 1, consumers: 4, cancel: true, maxBatch: 70},
}

// batchStressKinds are the kinds table and 3, which is the segment size
// plus one in chans_smallseg builds.
var batchStressKinds = append(slices.Clone(kinds), 3)

// TestBatchStress runs every shape on every kind.
func TestBatchStress(t *testing.T) {
	t.Logf("perturbation (chans_perturb): %v", sched.Enabled)
	perProducer := scale(60000)
	for _, capacity := range batchStressKinds {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			for i, sh := range batchShapes {
				t.Run(sh.name, func(t *testing.T) {
					runBatchStress(t, capacity, sh, perProducer/sh.producers, uint64(capacity+2)*131+uint64(i))
				})
			}
		})
	}
}

// batchSize draws a batch size in [1, max]: mostly small, sometimes up to
// max (large enough to cross segments and to exceed small buffers).
func batchSize(r *rand.Rand, maxSize int) int {
	if r.IntN(4) == 0 {
		return 1 + r.IntN(maxSize)
	}
	return 1 + r.IntN(min(maxSize, 4))
}

// batchEnd is the sentinel written into dst before a receive: a receive must
// not write past the values it returns.
const batchEnd = -1

// batchOps is the method set of Chan and Handle used here.
type batchOps interface {
	ops[int]
	SendMany(vs []int) (int, error)
	SendManyContext(ctx context.Context, vs []int) (int, error)
	RecvMany(dst []int) (int, error)
	RecvManyContext(ctx context.Context, dst []int) (int, error)
	TryRecvMany(dst []int) (int, error)
}

var (
	_ batchOps = (*chans.Chan[int])(nil)
	_ batchOps = (*chans.Handle[int])(nil)
)

func runBatchStress(t *testing.T, capacity int, sh batchShape, perProducer int, seed uint64) {
	c := chans.New[int](capacity)
	var (
		sent      = make([][]int, sh.producers) // per producer: values whose send reported success
		failed    = make([][]int, sh.producers) // per producer: values whose send reported failure
		got       = make([][]int, sh.consumers) // per consumer: values received, in order
		closeNil  atomic.Int32
		closed    atomic.Bool // a Close has returned nil
		drained   atomic.Bool // a receive has reported closed and drained
		cancels   = make(chan context.CancelFunc, 256)
		producers sync.WaitGroup
		consumers sync.WaitGroup
		helpers   sync.WaitGroup
		batchOK   atomic.Int64 // batch calls that moved at least one value, for the log
		moved     atomic.Int64 // values whose send reported success, for the closers
		prodDone  atomic.Bool  // every producer has returned
	)
	fail := func(format string, args ...any) {
		t.Errorf("%s/%s seed %d: %s", kindName(capacity), sh.name, seed, fmt.Sprintf(format, args...))
		c.Close() // nobody waits for a goroutine that gave up
	}
	// ctxFor returns a context for one call and a release to call when the
	// call has returned.
	ctxFor := func(r *rand.Rand) (context.Context, func()) {
		if !sh.cancel {
			return context.Background(), func() {}
		}
		switch r.IntN(6) {
		case 0, 1:
			return context.Background(), func() {}
		case 2:
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, func() {}
		case 3:
			cs := newCancelSoon()
			return cs, cs.cancel
		default:
			ctx, cancel := context.WithCancel(context.Background())
			select {
			case cancels <- cancel:
			default:
				cancel()
			}
			return ctx, cancel
		}
	}
	if sh.cancel {
		helpers.Add(1)
		go func() { // the canceller
			defer helpers.Done()
			r := rand.New(rand.NewPCG(seed, 99))
			for cancel := range cancels {
				for i := r.IntN(20); i > 0; i-- {
					runtime.Gosched()
				}
				cancel()
			}
		}()
	}
	// ctxErr reports whether err is what a call with ctx may return for
	// its context: ctx.Err() itself, once ctx is done.
	ctxErr := func(ctx context.Context, err error) bool {
		return err != nil && err == ctx.Err()
	}

	for p := range sh.producers {
		producers.Add(1)
		go func() {
			defer producers.Done()
			r := rand.New(rand.NewPCG(seed, uint64(p)))
			paths := []batchOps{c, c.Handle()}
			seq := 0
			next := func() int { seq++; return value(p, seq-1) }
			for seq < perProducer {
				o := paths[r.IntN(2)]
				after := closed.Load() // a Close returned before this call started
				ctx, release := ctxFor(r)
				var (
					vs  []int // the values of this call
					n   int   // how many of them it reports sent
					err error
				)
				switch op := r.IntN(10); {
				case op < 3: // single sends
					vs = []int{next()}
					switch op {
					case 0:
						err = o.Send(vs[0])
					case 1:
						err = o.SendContext(ctx, vs[0])
					case 2:
						if err = o.TrySend(vs[0]); err == chans.ErrFull {
							err = o.SendContext(ctx, vs[0])
						}
					}
					if err == nil {
						n = 1
					}
				default:
					vs = make([]int, min(batchSize(r, sh.maxBatch), perProducer-seq))
					for i := range vs {
						vs[i] = next()
					}
					if op < 6 {
						n, err = o.SendMany(vs)
					} else {
						n, err = o.SendManyContext(ctx, vs)
					}
					if n < 0 || n > len(vs) || (err == nil) != (n == len(vs)) {
						fail("producer %d: SendMany of %d values returned (%d, %v)", p, len(vs), n, err)
						release()
						return
					}
					if n > 0 {
						batchOK.Add(1)
					}
				}
				release()
				sent[p] = append(sent[p], vs[:n]...)
				failed[p] = append(failed[p], vs[n:]...)
				moved.Add(int64(n))
				if after && n > 0 {
					fail("producer %d: a send of %d values reported %d sent (%v) after Close returned", p, len(vs), n, err)
					return
				}
				switch {
				case err == nil:
				case err == chans.ErrClosed:
					// Closed: every send from now on fails at once.
					more := []int{next(), next()}
					failed[p] = append(failed[p], more...)
					if m, err := o.SendMany(more); m != 0 || err != chans.ErrClosed {
						fail("producer %d: SendMany after ErrClosed = (%d, %v), want (0, ErrClosed)", p, m, err)
					}
					v := next()
					failed[p] = append(failed[p], v)
					if err := o.Send(v); err != chans.ErrClosed {
						fail("producer %d: Send after ErrClosed = %v, want ErrClosed", p, err)
					}
					return
				case ctxErr(ctx, err):
					// A done context may win over a closed channel, but
					// then nothing more was sent (checked above).
				default:
					fail("producer %d: send of %d values: unexpected error %v", p, len(vs), err)
					return
				}
			}
		}()
	}

	for q := range sh.consumers {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			r := rand.New(rand.NewPCG(seed, uint64(1000+q)))
			paths := []batchOps{c, c.Handle()}
			buf := make([]int, 80)
			for {
				o := paths[r.IntN(2)]
				after := drained.Load() // a receive reported closed and drained before this call started
				ctx, release := ctxFor(r)
				var (
					n    int
					err  error
					try  bool // ErrEmpty is a legal result
					dst  []int
					many bool
				)
				switch op := r.IntN(9); op {
				case 0:
					var ok bool
					if buf[0], ok = o.Recv(); ok {
						n = 1
					} else {
						err = chans.ErrClosed
					}
				case 1:
					if buf[0], err = o.RecvContext(ctx); err == nil {
						n = 1
					}
				case 2:
					try = true
					if buf[0], err = o.TryRecv(); err == nil {
						n = 1
					}
				default:
					many = true
					size := batchSize(r, sh.maxBatch)
					if r.IntN(50) == 0 {
						size = 0
					}
					dst = buf[:size]
					for i := range buf {
						buf[i] = batchEnd
					}
					switch op {
					case 3, 4:
						n, err = o.RecvMany(dst)
					case 5, 6:
						n, err = o.RecvManyContext(ctx, dst)
					default:
						try = true
						n, err = o.TryRecvMany(dst)
					}
					switch {
					case len(dst) == 0:
						if n != 0 || err != nil {
							fail("consumer %d: receive into an empty dst = (%d, %v), want (0, nil)", q, n, err)
							release()
							return
						}
					case err == nil && (n < 1 || n > len(dst)), err != nil && n != 0:
						fail("consumer %d: batch receive into %d slots returned (%d, %v)", q, len(dst), n, err)
						release()
						return
					}
					if i := slices.IndexFunc(buf[n:], func(v int) bool { return v != batchEnd }); i >= 0 {
						fail("consumer %d: batch receive returned (%d, %v) but wrote %x into dst[%d]", q, n, err, buf[n+i], n+i)
						release()
						return
					}
					if n > 0 {
						batchOK.Add(1)
					}
				}
				release()
				switch {
				case err == nil:
					if after && n > 0 {
						fail("consumer %d received %x after another receive reported closed and drained", q, buf[:n])
						return
					}
					got[q] = append(got[q], buf[:n]...)
				case err == chans.ErrClosed:
					drained.Store(true)
					if m, err := o.TryRecvMany(buf[:3]); m != 0 || err != chans.ErrClosed {
						fail("consumer %d: TryRecvMany after closed and drained = (%d, %v)", q, m, err)
					}
					if m, err := o.RecvMany(buf[:1]); m != 0 || err != chans.ErrClosed {
						fail("consumer %d: RecvMany after closed and drained = (%d, %v)", q, m, err)
					}
					return
				case err == chans.ErrEmpty && try:
					runtime.Gosched()
				case ctxErr(ctx, err):
				default:
					fail("consumer %d: receive (batch %v): unexpected error %v", q, many, err)
					return
				}
			}
		}()
	}

	closeOnce := func() {
		switch err := c.Close(); err {
		case nil:
			closeNil.Add(1)
			closed.Store(true)
			if n, err := c.SendManyContext(context.Background(), []int{-1}); n != 0 || err != chans.ErrClosed {
				fail("SendManyContext after Close returned = (%d, %v), want (0, ErrClosed)", n, err)
			}
		case chans.ErrClosed:
		default:
			fail("Close: %v", err)
		}
	}
	for i := range sh.closers {
		helpers.Add(1)
		go func() {
			defer helpers.Done()
			// Close once a random share of the values has moved (or the
			// producers are done): early, midway or late in the run.
			r := rand.New(rand.NewPCG(seed, uint64(2000+i)))
			target := r.Int64N(int64(perProducer * sh.producers))
			for moved.Load() < target && !prodDone.Load() {
				runtime.Gosched()
			}
			closeOnce()
		}()
	}
	producers.Wait()
	prodDone.Store(true)
	if sh.closers == 0 {
		closeOnce()
	}
	consumers.Wait()
	close(cancels)
	helpers.Wait()
	if t.Failed() {
		return
	}

	if n := closeNil.Load(); n != 1 {
		t.Errorf("%d calls of Close returned nil, want 1", n)
	}
	want := map[int]bool{}
	total := 0
	for _, vs := range sent {
		for _, v := range vs {
			want[v] = true
		}
		total += len(vs)
	}
	bad := map[int]bool{}
	for _, vs := range failed {
		for _, v := range vs {
			bad[v] = true
		}
	}
	problems := 0
	report := func(format string, args ...any) {
		if problems++; problems <= 10 {
			t.Errorf(format, args...)
		}
	}
	seen := map[int]int{}
	for q, vs := range got {
		last := map[int]int{}
		for _, v := range vs {
			p, s := splitValue(v)
			if prev, ok := last[p]; ok && s <= prev {
				report("consumer %d received producer %d's value %d after its value %d (per-producer order)", q, p, s, prev)
			}
			last[p] = s
			if seen[v]++; seen[v] == 2 {
				report("producer %d's value %d received twice", p, s)
			}
			switch {
			case bad[v]:
				report("producer %d's value %d received, but its send reported failure", p, s)
			case !want[v]:
				report("consumer %d received %x, which nobody sent", q, v)
			}
		}
	}
	for v := range want {
		if seen[v] == 0 {
			p, s := splitValue(v)
			report("producer %d's value %d was sent (success reported) but never received", p, s)
		}
	}
	if problems > 10 {
		t.Errorf("... %d problems in all", problems)
	}
	if total == 0 && sh.closers == 0 {
		t.Errorf("no value was sent at all")
	}
	if n := c.Len(); n != 0 {
		t.Errorf("Len after the drain = %d, want 0", n)
	}
	if n, err := c.TryRecvMany(make([]int, 4)); n != 0 || err != chans.ErrClosed {
		t.Errorf("TryRecvMany after the drain = (%d, %v), want (0, ErrClosed)", n, err)
	}
	if err := chans.CheckInvariants(c); err != nil {
		t.Error(err)
	}
	if testing.Verbose() {
		t.Logf("%d values sent, %d batch calls moved values", total, batchOK.Load())
	}
}

// TestBatchCloseRace races Close against send batches while receivers keep
// taking tickets, round after round, on the kinds where Close's room bound
// can fall inside a batch: rendezvous, 1, 2 and 3. A send batch claims its
// tickets before Close takes effect, but Close may have read the room just
// before receivers raised it, so the batch's tickets from the bound on fail;
// the batch must tell the receivers of those cells that no value comes
// (failSend), or they wait forever. Each round checks what TestBatchStress
// checks (exactly-once delivery of what was reported sent, nothing reported
// failed received, per-producer order), and that every goroutine returns
// once Close has: one left waiting fails the test after eventually's bound
// on polls (the goroutines it strands are then reported too). Most effective
// with -tags chans_perturb, where Close yields between reading the room and
// taking effect.
func TestBatchCloseRace(t *testing.T) {
	rounds := scale(3000)
	for _, capacity := range []int{0, 1, 2, 3} {
		t.Run(kindName(capacity), func(t *testing.T) {
			checkLeaks(t)
			for round := range rounds {
				if !batchCloseRound(t, capacity, uint64(round)) {
					return
				}
			}
		})
	}
}

// batchCloseRound runs one round of TestBatchCloseRace and reports whether
// it passed.
func batchCloseRound(t *testing.T, capacity int, seed uint64) bool {
	const producers, consumers = 2, 3
	c := chans.New[int](capacity)
	var (
		wg       sync.WaitGroup
		sent     [producers][]int
		failed   [producers][]int
		got      [consumers][]int
		moved    atomic.Int64
		problems atomic.Int32
		returned atomic.Int32
	)
	fail := func(format string, args ...any) {
		if problems.Add(1) == 1 {
			t.Errorf("%s round %d: %s", kindName(capacity), seed, fmt.Sprintf(format, args...))
		}
	}
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer returned.Add(1)
			r := rand.New(rand.NewPCG(seed, uint64(p)))
			var o batchOps = c
			if p == 1 {
				o = c.Handle()
			}
			for seq := 0; ; {
				vs := make([]int, 2+r.IntN(5))
				for i := range vs {
					vs[i] = value(p, seq)
					seq++
				}
				n, err := o.SendMany(vs)
				sent[p] = append(sent[p], vs[:n]...)
				failed[p] = append(failed[p], vs[n:]...)
				moved.Add(int64(n))
				switch {
				case err == chans.ErrClosed:
					return
				case err != nil || n != len(vs):
					fail("producer %d: SendMany of %d values = (%d, %v)", p, len(vs), n, err)
					return
				}
			}
		}()
	}
	for q := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer returned.Add(1)
			var o batchOps = c
			if q == 1 {
				o = c.Handle()
			}
			dst := make([]int, 1+q*3)
			for {
				var n int
				var err error
				switch q {
				case 0:
					var ok bool
					if dst[0], ok = o.Recv(); ok {
						n = 1
					} else {
						err = chans.ErrClosed
					}
				case 1:
					n, err = o.RecvMany(dst)
				default:
					if n, err = o.TryRecvMany(dst); err == chans.ErrEmpty {
						runtime.Gosched()
						continue
					}
				}
				if err == chans.ErrClosed {
					return
				}
				if err != nil {
					fail("consumer %d: %v", q, err)
					return
				}
				got[q] = append(got[q], dst[:n]...)
			}
		}()
	}
	r := rand.New(rand.NewPCG(seed, 99))
	for target := r.Int64N(40); moved.Load() < target; {
		runtime.Gosched()
	}
	if err := c.Close(); err != nil {
		fail("Close: %v", err)
	}
	eventually(t, fmt.Sprintf("%s round %d: every sender and receiver returns after Close", kindName(capacity), seed),
		func() bool { return returned.Load() == producers+consumers })
	wg.Wait()
	if problems.Load() > 0 {
		return false
	}
	want, bad, seen := map[int]bool{}, map[int]bool{}, map[int]bool{}
	for p := range producers {
		for _, v := range sent[p] {
			want[v] = true
		}
		for _, v := range failed[p] {
			bad[v] = true
		}
	}
	for q := range consumers {
		last := map[int]int{}
		for _, v := range got[q] {
			p, s := splitValue(v)
			if prev, ok := last[p]; ok && s <= prev {
				fail("consumer %d received producer %d's value %d after its value %d", q, p, s, prev)
			}
			last[p] = s
			switch {
			case seen[v]:
				fail("producer %d's value %d received twice", p, s)
			case bad[v]:
				fail("producer %d's value %d received, but SendMany reported it not sent", p, s)
			case !want[v]:
				fail("consumer %d received %x, which nobody sent", q, v)
			}
			seen[v] = true
		}
	}
	for v := range want {
		if !seen[v] {
			p, s := splitValue(v)
			fail("producer %d's value %d was reported sent but never received", p, s)
		}
	}
	if err := chans.CheckInvariants(c); err != nil {
		fail("%v", err)
	}
	return problems.Load() == 0
}
