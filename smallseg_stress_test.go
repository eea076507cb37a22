package chans_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/sched"
)

// Conservation stress tests. They pass in every build, and are meant for
//
//	go test -race -tags chans_smallseg,chans_perturb -run SmallSeg .
//
// where segments have two cells, so that every few operations cross a
// segment boundary, grow the list, recycle spares and remove segments whose
// cells were all cancelled, and where internal/sched yields at random
// between the atomic steps of the protocols.
//
// Producers send unique values (producer in the high bits, sequence number
// in the low) with Send, TrySend and SendContext (done, expiring or live
// contexts); consumers take them with Recv, TryRecv and RecvContext alike;
// some rounds close the channel while producers are still sending. Checks:
// every value whose send returned nil is received exactly once, no value
// whose send failed is ever received, and each consumer sees each
// producer's values in the order they were sent.

type stressProfile struct {
	name string
	// Percentages of the plain, Try and Context variants; the rest of
	// Context calls use done contexts, expiring ones or live ones.
	plain, try   int
	done, expire int // of Context calls
}

var stressProfiles = []stressProfile{
	{name: "mixed", plain: 40, try: 30, done: 30, expire: 40},
	{name: "cancel-heavy", plain: 10, try: 20, done: 50, expire: 45},
}

type stressCfg struct {
	k          int
	producers  int
	consumers  int
	perProd    int
	closeEarly bool
	profile    stressProfile
	seed       uint64
}

func (c stressCfg) String() string {
	return fmt.Sprintf("%s/%s/P%dC%d/n=%d/early=%v/seed=%d", linzKindName(c.k), c.profile.name, c.producers, c.consumers, c.perProd, c.closeEarly, c.seed)
}

// stressContext returns a context for a Context call: done already, expiring
// within a few microseconds, or never done.
func stressContext(r *rand.Rand, p stressProfile) (context.Context, context.CancelFunc) {
	n := r.IntN(100)
	switch {
	case n < p.done:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	case n < p.done+p.expire:
		return context.WithTimeout(context.Background(), time.Duration(r.IntN(20))*time.Microsecond)
	}
	return context.WithCancel(context.Background())
}

func runStress(t *testing.T, cfg stressCfg) {
	c := chans.New[uint64](cfg.k)
	var (
		pwg, cwg sync.WaitGroup
		sent     = make([][]uint64, cfg.producers) // per producer, values whose send returned nil
		got      = make([][]uint64, cfg.consumers) // per consumer, values received in order
		failed   = make([]map[uint64]bool, cfg.producers)
		closes   atomic.Int64
	)
	errorf := func(format string, args ...any) { t.Errorf("%v: "+format, append([]any{cfg}, args...)...) }
	for p := range cfg.producers {
		failed[p] = map[uint64]bool{}
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			r := rand.New(rand.NewPCG(cfg.seed, uint64(p)))
			var ops interface {
				Send(uint64) error
				SendContext(context.Context, uint64) error
				TrySend(uint64) error
			} = c
			if p%2 == 1 {
				ops = c.Handle()
			}
			closeAt := -1
			if cfg.closeEarly && p == 0 {
				closeAt = cfg.perProd / 2
			}
			for i := range cfg.perProd {
				if i == closeAt {
					if err := c.Close(); err == nil {
						closes.Add(1)
					}
				}
				v := uint64(p)<<32 | uint64(i)
				var err error
				switch n := r.IntN(100); {
				case n < cfg.profile.plain:
					err = ops.Send(v)
				case n < cfg.profile.plain+cfg.profile.try:
					err = ops.TrySend(v)
				default:
					ctx, cancel := stressContext(r, cfg.profile)
					err = ops.SendContext(ctx, v)
					cancel()
				}
				switch err {
				case nil:
					sent[p] = append(sent[p], v)
				case chans.ErrClosed:
					failed[p][v] = true
					return
				case chans.ErrFull, context.Canceled, context.DeadlineExceeded:
					failed[p][v] = true
				default:
					errorf("producer %d: send returned %v", p, err)
					return
				}
			}
		}()
	}
	for q := range cfg.consumers {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			r := rand.New(rand.NewPCG(cfg.seed, uint64(1000+q)))
			var ops interface {
				Recv() (uint64, bool)
				RecvContext(context.Context) (uint64, error)
				TryRecv() (uint64, error)
			} = c
			if q%2 == 0 {
				ops = c.Handle()
			}
			for {
				var (
					v   uint64
					err error
				)
				switch n := r.IntN(100); {
				case n < cfg.profile.plain:
					var ok bool
					if v, ok = ops.Recv(); !ok {
						err = chans.ErrClosed
					}
				case n < cfg.profile.plain+cfg.profile.try:
					v, err = ops.TryRecv()
				default:
					ctx, cancel := stressContext(r, cfg.profile)
					v, err = ops.RecvContext(ctx)
					cancel()
				}
				switch err {
				case nil:
					got[q] = append(got[q], v)
				case chans.ErrClosed:
					return
				case chans.ErrEmpty:
					runtime.Gosched()
				case context.Canceled, context.DeadlineExceeded:
				default:
					errorf("consumer %d: receive returned %v", q, err)
					return
				}
			}
		}()
	}
	pwg.Wait()
	if err := c.Close(); err == nil {
		closes.Add(1)
	}
	cwg.Wait()

	if n := closes.Load(); n != 1 {
		errorf("%d calls of Close returned nil, want 1", n)
	}
	if _, ok := c.Recv(); ok {
		errorf("Recv after the consumers saw the channel closed and drained got a value")
	}
	// Conservation: received exactly the values whose sends returned nil.
	want := map[uint64]bool{}
	for p := range sent {
		for _, v := range sent[p] {
			want[v] = true
		}
	}
	seen := map[uint64]int{}
	for q := range got {
		last := make([]int64, cfg.producers)
		for i := range last {
			last[i] = -1
		}
		for _, v := range got[q] {
			p, i := int(v>>32), int64(v&0xffffffff)
			if p >= cfg.producers {
				errorf("consumer %d received %#x, which nobody sent", q, v)
				continue
			}
			if seen[v]++; seen[v] == 2 {
				errorf("value %#x received twice", v)
			}
			if !want[v] {
				errorf("consumer %d received %#x, whose send did not return nil (failed: %v)", q, v, failed[p][v])
			}
			if i <= last[p] {
				errorf("consumer %d received %#x after %#x: producer %d's order broken", q, v, uint64(p)<<32|uint64(last[p]), p)
			}
			last[p] = i
		}
	}
	lost := 0
	for v := range want {
		if seen[v] == 0 {
			if lost++; lost <= 5 {
				errorf("value %#x was sent (nil) but never received", v)
			}
		}
	}
	if lost > 5 {
		errorf("%d values lost in all", lost)
	}
}

// TestSmallSegStress runs the conservation stress for every kind, both
// profiles, with and without an early Close.
func TestSmallSegStress(t *testing.T) {
	perProd, rounds := 2000, 2
	if testing.Short() {
		perProd, rounds = 300, 1
	}
	t.Logf("segment-size build tag chans_smallseg and perturbation (chans_perturb: %v) make this test effective", sched.Enabled)
	before := runtime.NumGoroutine()
	for _, k := range []int{0, 1, 2, 3, 64, 1024, chans.Unbounded} {
		for _, prof := range stressProfiles {
			for round := range rounds {
				for _, early := range []bool{false, true} {
					cfg := stressCfg{
						k: k, producers: 3, consumers: 3, perProd: perProd,
						closeEarly: early, profile: prof, seed: uint64(round*2+1) * 0x9e3779b9,
					}
					t.Run(cfg.String(), func(t *testing.T) { runStress(t, cfg) })
				}
			}
		}
	}
	linzWaitGoroutines(t, before)
}

// TestSmallSegManyToOne stresses one consumer against many producers on
// small buffers, where senders park and Close cancels parked senders.
func TestSmallSegManyToOne(t *testing.T) {
	perProd := 3000
	if testing.Short() {
		perProd = 500
	}
	before := runtime.NumGoroutine()
	for _, k := range []int{0, 1, 2, chans.Unbounded} {
		cfg := stressCfg{k: k, producers: 6, consumers: 1, perProd: perProd, closeEarly: true, profile: stressProfiles[0], seed: 7}
		t.Run(cfg.String(), func(t *testing.T) { runStress(t, cfg) })
	}
	linzWaitGoroutines(t, before)
}
