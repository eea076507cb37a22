package chans_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/scalable-go/chans"
)

// traffic is one many-goroutine run: producers send unique values (producer
// number and sequence number) with a random mix of operations, consumers
// receive with another mix until the channel is closed and drained, and the
// run then checks what came out against what went in.
type traffic struct {
	producers, consumers int
	perProducer          int  // values each producer attempts
	cancel               bool // contexts get cancelled at random moments
	closers              int  // goroutines racing to Close at random moments; 0: close once producers are done
	seed                 uint64
}

// trafficLog is what a run observed.
type trafficLog struct {
	sent     [][]int // per producer: sequence numbers whose send returned nil, in order
	received [][]int // per consumer: values received, in order
	closeNil atomic.Int32
}

// value encodes producer p's sequence number seq: seq in the low seqBits
// bits, p above them.
func value(p, seq int) int {
	if seq >= 1<<seqBits {
		panic("stress: sequence number too large to encode")
	}
	return p<<seqBits | seq
}

func splitValue(v int) (p, seq int) { return v >> seqBits, v & (1<<seqBits - 1) }

// seqBits is 32 where int has 64 bits, 20 where it has 32 (the tests then
// still build and run, with fewer values per producer).
const seqBits = 20 + 12*(^uint(0)>>63)

// runTraffic runs tr on a new channel and checks, whatever the interleaving:
//   - every send that returned nil was received exactly once, and no value
//     whose send failed (ErrFull, ErrClosed, ctx.Err()) was received;
//   - each consumer received each producer's values in the order sent;
//   - errors are the documented ones, unwrapped;
//   - Close: exactly one call returned nil; a send that started after a Close
//     returned fails with ErrClosed; a receive that started after another
//     receive reported closed-and-drained reports it too; a producer that saw
//     ErrClosed keeps seeing it;
//   - afterwards Len is 0 and the channel reports closed.
func runTraffic(t *testing.T, capacity int, v via, tr traffic) {
	t.Helper()
	c := chans.New[int](capacity)
	log := &trafficLog{
		sent:     make([][]int, tr.producers),
		received: make([][]int, tr.consumers),
	}
	var (
		closed    atomic.Bool // a Close has returned nil
		drained   atomic.Bool // a receive has reported closed and drained
		cancels   = make(chan context.CancelFunc, 256)
		producers sync.WaitGroup
		consumers sync.WaitGroup
		helpers   sync.WaitGroup
	)

	// ctxFor returns a context for one operation: never cancelled, cancelled
	// already, cancelled as it starts to wait, or cancelled by the canceller
	// goroutine at some moment. release must be called when the operation
	// returned.
	ctxFor := func(rng *rand.Rand) (ctx context.Context, release func()) {
		if !tr.cancel {
			return context.Background(), func() {}
		}
		switch rng.IntN(6) {
		case 0, 1:
			return context.Background(), func() {}
		case 2:
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, func() {}
		case 3:
			c := newCancelSoon()
			return c, c.cancel
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
	if tr.cancel {
		helpers.Add(1)
		go func() { // the canceller
			defer helpers.Done()
			rng := rand.New(rand.NewPCG(tr.seed, 99))
			for cancel := range cancels {
				for i := rng.IntN(20); i > 0; i-- {
					runtime.Gosched()
				}
				cancel()
			}
		}()
	}

	// fail reports a problem and closes the channel, so that no goroutine
	// waits for the one that gives up after reporting.
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		c.Close()
	}

	// checkClosedErr reports err unless it is ErrClosed; what names the call.
	checkClosedErr := func(err error, what string) {
		if err != chans.ErrClosed {
			fail("%s after the channel was closed: got %v, want ErrClosed", what, err)
		}
	}

	for p := 0; p < tr.producers; p++ {
		producers.Add(1)
		go func() {
			defer producers.Done()
			o := open(v, c)
			rng := rand.New(rand.NewPCG(tr.seed, uint64(p)))
			sawClosed := false
			for seq := 0; seq < tr.perProducer; seq++ {
				after := closed.Load() // a Close returned before this send started
				ctx, release := ctxFor(rng)
				var err error
				switch rng.IntN(4) {
				case 0:
					err = o.Send(value(p, seq))
				case 1:
					err = o.SendContext(ctx, value(p, seq))
				case 2: // TrySend, and on ErrFull the blocking call
					if err = o.TrySend(value(p, seq)); err == chans.ErrFull {
						err = o.SendContext(ctx, value(p, seq))
					}
				case 3: // TrySend alone; ErrFull is an outcome
					err = o.TrySend(value(p, seq))
				}
				release()
				switch {
				case err == nil:
					if after || sawClosed {
						fail("producer %d: send of %d returned nil after the channel was closed", p, seq)
						return
					}
					log.sent[p] = append(log.sent[p], seq)
				case err == chans.ErrClosed:
					sawClosed = true
				case err == chans.ErrFull:
				case err == ctx.Err() && ctx.Err() != nil:
				default:
					fail("producer %d: send of %d: unexpected error %v", p, seq, err)
					return
				}
				if after && err != chans.ErrClosed && err != ctx.Err() {
					checkClosedErr(err, "send")
				}
				if sawClosed {
					// Once closed, every kind of send fails at once.
					checkClosedErr(o.TrySend(-1), "TrySend")
					checkClosedErr(o.Send(-1), "Send")
					return
				}
			}
		}()
	}

	for i := 0; i < tr.consumers; i++ {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			o := open(v, c)
			rng := rand.New(rand.NewPCG(tr.seed, uint64(1000+i)))
			var got []int
			defer func() { log.received[i] = got }()
			for {
				after := drained.Load() // another receive reported closed and drained before this one started
				ctx, release := ctxFor(rng)
				var (
					val int
					err error
				)
				switch rng.IntN(3) {
				case 0:
					var ok bool
					if val, ok = o.Recv(); !ok {
						err = chans.ErrClosed
					}
				case 1:
					val, err = o.RecvContext(ctx)
				case 2: // TryRecv, and on ErrEmpty the blocking call
					if val, err = o.TryRecv(); err == chans.ErrEmpty {
						val, err = o.RecvContext(ctx)
					}
				}
				release()
				switch {
				case err == nil:
					if after {
						fail("consumer %d received %x after another receiver saw the channel closed and drained", i, val)
						return
					}
					got = append(got, val)
				case err == chans.ErrClosed:
					drained.Store(true)
					_, err := o.TryRecv()
					checkClosedErr(err, "TryRecv")
					if _, ok := o.Recv(); ok {
						fail("consumer %d: Recv returned a value after closed and drained", i)
					}
					return
				case err == ctx.Err() && ctx.Err() != nil:
				default:
					fail("consumer %d: unexpected error %v", i, err)
					return
				}
			}
		}()
	}

	closeOnce := func() {
		if err := c.Close(); err == nil {
			log.closeNil.Add(1)
			closed.Store(true)
			checkClosedErr(c.TrySend(-1), "TrySend after Close returned")
			checkClosedErr(c.SendContext(context.Background(), -1), "SendContext after Close returned")
		} else if err != chans.ErrClosed {
			fail("Close: got %v, want nil or ErrClosed", err)
		}
	}
	for i := 0; i < tr.closers; i++ {
		helpers.Add(1)
		go func() {
			defer helpers.Done()
			rng := rand.New(rand.NewPCG(tr.seed, uint64(2000+i)))
			for n := rng.IntN(tr.perProducer * 4); n > 0; n-- {
				runtime.Gosched()
			}
			closeOnce()
		}()
	}
	producers.Wait()
	if tr.closers == 0 {
		closeOnce() // the consumers then drain what is left
	}
	consumers.Wait()
	close(cancels)
	helpers.Wait()

	checkTraffic(t, c, log, tr)
}

// checkTraffic checks a finished run's log: see runTraffic.
func checkTraffic(t *testing.T, c *chans.Chan[int], log *trafficLog, tr traffic) {
	t.Helper()
	if t.Failed() {
		return
	}
	if n := log.closeNil.Load(); n != 1 {
		t.Errorf("%d Close calls returned nil, want exactly 1", n)
	}
	// Multiset in == multiset out, with no duplicates.
	want := make(map[int]bool)
	total := 0
	for p, seqs := range log.sent {
		for _, seq := range seqs {
			want[value(p, seq)] = true
		}
		total += len(seqs)
	}
	seen := make(map[int]int)
	problems := 0
	report := func(format string, args ...any) {
		if problems++; problems <= 10 {
			t.Errorf(format, args...)
		}
	}
	for i, vals := range log.received {
		last := make(map[int]int) // producer → last sequence number seen here
		for _, val := range vals {
			p, seq := splitValue(val)
			if prev, ok := last[p]; ok && seq <= prev {
				report("consumer %d received producer %d's value %d after its value %d (per-producer FIFO)", i, p, seq, prev)
			}
			last[p] = seq
			if seen[val]++; seen[val] > 1 {
				report("producer %d's value %d received %d times", p, seq, seen[val])
			}
			if !want[val] {
				report("producer %d's value %d received, but its send did not return nil", p, seq)
			}
		}
	}
	for val := range want {
		if seen[val] == 0 {
			p, seq := splitValue(val)
			report("producer %d's value %d was sent (nil) but never received", p, seq)
		}
	}
	if problems > 10 {
		t.Errorf("... %d problems in all", problems)
	}
	if total == 0 && tr.closers == 0 && !tr.cancel {
		t.Errorf("no value was sent at all")
	}
	if n := c.Len(); n != 0 {
		t.Errorf("Len() after draining = %d, want 0", n)
	}
	if err := chans.CheckInvariants(c); err != nil {
		t.Error(err)
	}
	if _, err := c.TryRecv(); err != chans.ErrClosed {
		t.Errorf("TryRecv after draining: %v, want ErrClosed", err)
	}
}

// TestStressConservation runs many producers and consumers with every mix
// of operations on every channel kind, closing once the producers are done:
// every value sent is received exactly once, in each producer's order at
// each consumer.
func TestStressConservation(t *testing.T) {
	shapes := []struct{ producers, consumers int }{{1, 1}, {4, 4}, {1, 6}, {6, 1}}
	forEachKindVia(t, func(t *testing.T, capacity int, v via) {
		for i, sh := range shapes {
			t.Run(fmt.Sprintf("p=%d/c=%d", sh.producers, sh.consumers), func(t *testing.T) {
				runTraffic(t, capacity, v, traffic{
					producers:   sh.producers,
					consumers:   sh.consumers,
					perProducer: scale(60000) / sh.producers,
					seed:        uint64(capacity*10 + i),
				})
			})
		}
	})
}
