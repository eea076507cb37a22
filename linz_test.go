package chans_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/linz"
	"github.com/scalable-go/chans/internal/sched"
)

// Linearizability tests: many short random histories of every channel kind,
// recorded by internal/linz and checked with Porcupine (buffered and
// unbounded channels) or the rendezvous pairing check (capacity 0).
//
// Sizes: the default run fits CI under -race; -short shrinks it; the
// environment variable CHANS_LINZ_LONG=1 runs about 100,000 histories, and
// CHANS_LINZ_N sets the number of histories per kind.
// CHANS_LINZ_SEED fixes the base seed of the scripts (the interleavings
// still vary), CHANS_LINZ_DIR keeps the reports of failures, which
// otherwise go to t.TempDir() and vanish with it, CHANS_LINZ_NOLEN=1
// leaves Len out of the histories, and CHANS_LINZ_TIMEOUT bounds the check
// of one history (20s; one that runs past it is counted unknown).

// linzCheckTimeout bounds Porcupine's search per history; a history whose
// check runs out of it counts as unknown, neither passed nor failed.
// CHANS_LINZ_TIMEOUT (a duration) sets it, for long runs on a loaded
// machine.
var linzCheckTimeout = func() time.Duration {
	if s := os.Getenv("CHANS_LINZ_TIMEOUT"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			panic("CHANS_LINZ_TIMEOUT=" + s + ": want a positive duration")
		}
		return d
	}
	return 20 * time.Second
}()

// linzSelects adds selects (a send and a receive case on the channel) to
// every other history; CHANS_LINZ_NOSELECT=1 leaves them out.
var linzSelects = os.Getenv("CHANS_LINZ_NOSELECT") == ""

var linzErrs = linz.Errors{Closed: chans.ErrClosed, Full: chans.ErrFull, Empty: chans.ErrEmpty}

// lenGaveUps counts the Len calls that gave up retrying (chans.SetLenGaveUp).
var lenGaveUps atomic.Int64

func init() { chans.SetLenGaveUp(func() { lenGaveUps.Add(1) }) }

// linzChan is a channel as the histories see it: a Len during which some
// Len gave up retrying reports linz.LenAny, which the model accepts in any
// state, since such a count may be one the channel never held (Len's
// documentation). Another goroutine's Len giving up at the same time makes
// this one LenAny too: rare, and it only loosens the check of that call.
type linzChan struct{ *chans.Chan[int] }

func (c linzChan) Len() int {
	g := lenGaveUps.Load()
	n := c.Chan.Len()
	if lenGaveUps.Load() != g {
		return linz.LenAny
	}
	return n
}

// linzKinds are the capacities checked: rendezvous, small buffers, the
// block of the segment layout (64 cells) and one less and one more, a large
// buffer and unbounded. (A history is too short to fill a buffer of the
// segment size, 256 cells: the chans_smallseg build, two-cell segments,
// crosses segment boundaries instead.)
var linzKinds = []int{0, 1, 2, 3, 63, 64, 65, 1024, chans.Unbounded}

func linzKindName(k int) string {
	if k == chans.Unbounded {
		return "cap=unbounded"
	}
	return "cap=" + strconv.Itoa(k)
}

// linzHistories returns how many histories to run per kind, and the base
// seed of their scripts.
func linzHistories(t *testing.T) (n int, base uint64) {
	n = 1000
	switch {
	case os.Getenv("CHANS_LINZ_LONG") != "":
		n = 100_000 / len(linzKinds)
	case testing.Short():
		n = 100
	}
	if s := os.Getenv("CHANS_LINZ_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("CHANS_LINZ_N=%q: want a positive count of histories per kind", s)
		}
		n = v
	}
	base = 1
	if s := os.Getenv("CHANS_LINZ_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CHANS_LINZ_SEED=%q: %v", s, err)
		}
		base = v
	} else if os.Getenv("CHANS_LINZ_LONG") != "" {
		base = rand.Uint64() >> 1
	}
	return n, base
}

// linzUnknown logs a history of a channel of capacity k whose check ran
// out of time and, when CHANS_LINZ_DIR is set, keeps its report there for
// a person to read. It then checks the history without its Len calls,
// which change nothing, so that a linearizable history stays linearizable
// without them; the search is then usually quick (the Len calls are what
// it could not get through). An illegal verdict there fails the test; it
// reports whether the check found the rest linearizable.
func linzUnknown(t *testing.T, v *linz.Verdict, k int, name string, seed uint64) bool {
	t.Helper()
	t.Logf("seed %d: history of %d operations unknown: its check ran past %v", seed, len(v.Ops), linzCheckTimeout)
	if os.Getenv("CHANS_LINZ_DIR") != "" {
		if path, err := v.Write(linzReportDir(t), fmt.Sprintf("%s-seed%d-unknown", name, seed)); err != nil {
			t.Errorf("writing report: %v", err)
		} else {
			t.Logf("report: %s", path)
		}
	}
	w := linz.Check(k, linz.DropLen(v.Ops), linzCheckTimeout)
	switch w.Result {
	case porcupine.Ok:
		t.Logf("seed %d: linearizable without its %d Len calls", seed, len(v.Ops)-len(w.Ops))
		return true
	case porcupine.Illegal:
		path, err := w.Write(linzReportDir(t), fmt.Sprintf("%s-seed%d-nolen", name, seed))
		if err != nil {
			t.Errorf("writing report: %v", err)
		}
		t.Errorf("seed %d: history of %d operations is not linearizable even without its Len calls: %s\nreport: %s",
			seed, len(v.Ops), problemOr(w.Problem, "no linearization exists"), path)
	default:
		t.Logf("seed %d: still unknown without its Len calls", seed)
	}
	return false
}

// linzReportDir is where failure reports go.
func linzReportDir(t *testing.T) string {
	if d := os.Getenv("CHANS_LINZ_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// linzConfig derives the shape of history i from its seed: 2 to 4 clients
// of 30 operations, mostly with rescues of waiting clients so the channel
// stays open longer, sometimes closing midway.
func linzConfig(seed uint64) linz.Config {
	return linz.Config{
		Clients:   2 + int(seed%3),
		Ops:       30,
		Seed:      seed,
		CloseOdds: 200,
		Rescue:    seed%4 != 0,
		NoLen:     os.Getenv("CHANS_LINZ_NOLEN") != "",
		Batch:     linzBatch, // linz_batch_test.go
	}
}

// linzSelect runs a select over sending v on c and receiving from c. Calls
// with an even v build their cases afresh; calls with an odd v reuse a case
// list from a pool, one call at a time, so that a list leads many calls and
// keeps its call state (Select's reused-list path), and send with
// OnSendPtr.
func linzSelect(c *chans.Chan[int]) linz.SelectFunc[int] {
	lists := sync.Pool{New: func() any { return newLinzCases(c, 0, true) }}
	return func(ctx context.Context, v int, block bool) (which, got int, ok bool, err error) {
		var l *linzCases
		if v%2 == 0 {
			l = newLinzCases(c, v, false)
		} else {
			l = lists.Get().(*linzCases)
			defer lists.Put(l)
			*l = linzCases{v: v, cases: l.cases}
		}
		j := -1
		switch {
		case !block:
			j, _ = chans.TrySelect(l.cases...)
		case ctx != nil:
			j, err = chans.SelectContext(ctx, l.cases...)
		default:
			j = chans.Select(l.cases...)
		}
		switch j {
		case 0:
			return linz.CaseSend, 0, false, l.sendErr
		case 1:
			return linz.CaseRecv, l.got, l.ok, nil
		}
		return linz.CaseNone, 0, false, err
	}
}

// linzCases is a select's case list over one channel and what its
// callbacks report.
type linzCases struct {
	v       int // sent by the OnSendPtr case
	sendErr error
	got     int
	ok      bool
	cases   []chans.Case
}

// newLinzCases returns a case list over c. Its send case sends v with
// OnSend, for a list built for one call; or, with reused set, whatever l.v
// holds when a call starts (OnSendPtr), for a list that serves many calls.
func newLinzCases(c *chans.Chan[int], v int, reused bool) *linzCases {
	l := &linzCases{v: v}
	send := chans.OnSend(c, v, func(err error) { l.sendErr = err })
	if reused {
		send = chans.OnSendPtr(c, &l.v, func(err error) { l.sendErr = err })
	}
	l.cases = []chans.Case{send, chans.OnRecv(c, func(x int, y bool) { l.got, l.ok = x, y })}
	return l
}

// linzOps gives even clients the channel itself and odd ones a Handle.
func linzOps(c *chans.Chan[int]) func(int) linz.Ops[int] {
	return func(i int) linz.Ops[int] {
		if i%2 == 1 {
			return c.Handle()
		}
		return c
	}
}

// TestLinz checks random concurrent histories of every kind.
func TestLinz(t *testing.T) {
	n, base := linzHistories(t)
	t.Logf("%d histories per kind, base seed %d (CHANS_LINZ_SEED), perturbation %v", n, base, sched.Enabled)
	before := runtime.NumGoroutine()
	var total, totalOps, unknown int
	start := time.Now()
	for _, k := range linzKinds {
		t.Run(linzKindName(k), func(t *testing.T) {
			ops, okOps, unk, unkNoLen := 0, 0, 0, 0
			for i := range n {
				seed := base + uint64(i)
				c := chans.New[int](k)
				cfg := linzConfig(seed)
				if linzSelects && seed%2 == 1 {
					cfg.Select = linzSelect(c)
				}
				h := linz.Run(cfg, linzErrs, linzChan{c}, linzOps(c))
				if err := chans.CheckInvariants(c); err != nil {
					t.Fatalf("seed %d: after the history: %v", seed, err)
				}
				ops += len(h)
				for _, op := range h {
					if r := op.Output.(linz.Ret); r.Res == linz.OK && op.Input.(linz.Call).Kind != linz.Len {
						okOps++
					}
				}
				v := linz.Check(k, h, linzCheckTimeout)
				switch v.Result {
				case porcupine.Illegal:
					path, err := v.Write(linzReportDir(t), fmt.Sprintf("linz-%s-seed%d", linzKindName(k), seed))
					if err != nil {
						t.Errorf("writing report: %v", err)
					}
					t.Fatalf("seed %d (%d clients, selects %v): history of %d operations is not linearizable: %s\nreport: %s",
						seed, cfg.Clients, cfg.Select != nil, len(h), problemOr(v.Problem, "no linearization exists"), path)
				case porcupine.Unknown:
					if linzUnknown(t, &v, k, "linz-"+linzKindName(k), seed) {
						unkNoLen++
					}
					unk++
				}
			}
			t.Logf("%d histories, %d operations checked (%d sent or received a value, or closed), %d unknown (timed out; %d of them linearizable without their Len calls)", n, ops, okOps, unk, unkNoLen)
			total += n
			totalOps += ops
			unknown += unk
		})
	}
	t.Logf("total: %d histories, %d operations, %d unknown, in %v", total, totalOps, unknown, time.Since(start).Round(time.Millisecond))
	linzWaitGoroutines(t, before)
}

func problemOr(p, alt string) string {
	if p != "" {
		return p
	}
	return alt
}

// linzWaitGoroutines fails t if goroutines started by the test outlive it.
// It polls, within a bounded number of rounds, because callbacks of expired
// context timers may still be finishing; correctness never depends on it.
func linzWaitGoroutines(t *testing.T, n int) {
	t.Helper()
	for i := 0; ; i++ {
		if runtime.NumGoroutine() <= n {
			return
		}
		if i == 2000 {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, want at most %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}

// linzScale scales the attempts of the reproductions below: n by default,
// n/10 with -short, 10n for CHANS_LINZ_LONG=1.
func linzScale(n int) int {
	switch {
	case os.Getenv("CHANS_LINZ_LONG") != "":
		return 10 * n
	case testing.Short():
		return max(1, n/10)
	}
	return n
}

// Reproductions of the violations TestLinz found, reduced to two or three
// goroutines. Each one's failure condition is a property every correct
// channel has whatever the schedule; the schedule only decides whether the
// bug shows, so each loops until it does or the attempts run out.

// TestLinzReproCloseRacesWaitingSender: a Send that would have to wait when
// Close takes effect must fail with ErrClosed, so after Close the channel
// holds exactly what was buffered before it. Found as (cap=0):
//
//	client 0 Send(2) → ok [3,11]
//	client 1 Close() → ok [4,5]
//	client 1 TryRecv() → 2 [10,24]
//
// and (cap=1):
//
//	client 0 TrySend(1) → ok [1,2]
//	client 0 Send(2) → ok [3,13]
//	client 1 Close() → ok [4,5]
//	client 1 TryRecv() → 1 [10,11]
//	client 1 Recv() → 2 [12,26]
func TestLinzReproCloseRacesWaitingSender(t *testing.T) {
	attempts := linzScale(5000)
	for _, k := range []int{0, 1, 2} {
		t.Run(linzKindName(k), func(t *testing.T) {
			for i := range attempts {
				c := chans.New[int](k)
				for j := range k {
					if err := c.TrySend(j); err != nil {
						t.Fatalf("filling: %v", err)
					}
				}
				sent := make(chan error)
				go func() { sent <- c.Send(-1) }()
				for range i % 4 {
					runtime.Gosched() // vary how far the sender got
				}
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
				// Buffer full (or rendezvous) from before Close to after
				// it: the send cannot have delivered before Close.
				for j := range k {
					if v, err := c.TryRecv(); err != nil || v != j {
						t.Fatalf("attempt %d: buffered value %d: got %v, %v", i, j, v, err)
					}
				}
				v, err := c.TryRecv()
				serr := <-sent
				if err != chans.ErrClosed {
					t.Fatalf("attempt %d: after Close, with the buffer full and no receiver, TryRecv returned (%v, %v) and the waiting Send returned %v; want ErrClosed and ErrClosed", i, v, err, serr)
				}
				if serr != chans.ErrClosed {
					t.Fatalf("attempt %d: Send that had to wait at Close returned %v", i, serr)
				}
			}
		})
	}
}

// TestLinzReproTrySendSpuriousFull: TrySend must not report ErrFull while
// the buffer has room. Here one producer fills a channel of capacity k and
// waits until Len reports the values taken (by a consumer that receives with
// Recv, RecvContext or a Select); the buffer is then empty and
// nobody else sends, so the next TrySend must succeed. Found as (cap=1):
//
//	client 0 TrySend(1) → ok [1,2]
//	client 0 Send(2) → ok [3,9]
//	client 1 Recv() → 1 [4,5]
//	client 1 RecvCtx() → 2 [8,15]
//	client 0 Len() → 0 [10,11]
//	client 0 TrySend(4) → full [12,13]
func TestLinzReproTrySendSpuriousFull(t *testing.T) {
	rounds := linzScale(20000)
	recvs := map[string]func(c *chans.Chan[int]) bool{
		"Recv": func(c *chans.Chan[int]) bool { _, ok := c.Recv(); return ok },
		"RecvContext": func(c *chans.Chan[int]) bool {
			_, err := c.RecvContext(context.Background())
			return err == nil
		},
		"Select": func(c *chans.Chan[int]) bool {
			ok := false
			chans.Select(chans.OnRecv(c, func(_ int, y bool) { ok = y }))
			return ok
		},
	}
	for _, k := range []int{1, 2} {
		for name, recv := range recvs {
			t.Run(linzKindName(k)+"/"+name, func(t *testing.T) {
				c := chans.New[int](k)
				done := make(chan struct{})
				go func() {
					defer close(done)
					for recv(c) {
					}
				}()
				defer func() { c.Close(); <-done }()
				for i := range rounds {
					for c.Len() != 0 {
						runtime.Gosched()
					}
					// Len saw nothing buffered, the producer is this goroutine
					// and the consumer only takes: k TrySends must fit.
					for j := range k {
						if err := c.TrySend(i); err != nil {
							t.Fatalf("round %d: TrySend %d of %d into a channel of capacity %d that Len just saw empty: %v", i, j+1, k, k, err)
						}
					}
				}
			})
		}
	}
}

// TestLinzReproLenAfterClose: after Close returns, what a channel holds can
// only shrink, and here nobody receives, so Len must equal the number of
// values a drain then finds, whatever the senders racing Close did. Found
// under chans_smallseg,chans_perturb as (unbounded; Len counts a send that
// then fails):
//
//	client 1 TrySend(1000001) → ok [1,2]
//	client 1 TrySend(1000002) → closed [3,17]
//	client 0 RecvCtx() → 1000001 [4,5]
//	client 0 TrySend(2) → ok [6,7]
//	client 0 SendCtx(3) → ok [8,9]
//	client 0 Close() → ok [10,11]
//	client 0 Len() → 3 [12,13]        (2 and 3 are all there is)
//
// and (capacity 1024; Len misses a send that has its ticket but has not
// written its cell):
//
//	client 0 Send(1) → ok [1,3]
//	client 1 TrySend(1000001) → ok [2,14]
//	client 0 Send(2) → ok [4,5]
//	client 0 SendCtx(3) → ok [6,7]
//	client 0 Close() → ok [8,9]
//	client 0 RecvCtx() → 1 [10,11]
//	client 0 Len() → 2 [12,13]        (1000001, 2, 3 follow)
func TestLinzReproLenAfterClose(t *testing.T) {
	attempts := linzScale(500)
	for _, k := range []int{1024, chans.Unbounded} {
		t.Run(linzKindName(k), func(t *testing.T) {
			for i := range attempts {
				c := chans.New[int](k)
				var wg sync.WaitGroup
				for g := range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for j := range 64 {
							if c.TrySend(g<<20|j) != nil {
								return
							}
						}
					}()
				}
				for range i % 8 {
					runtime.Gosched()
				}
				c.Close()
				n := c.Len()
				wg.Wait()
				m := 0
				for {
					if _, err := c.TryRecv(); err != nil {
						break
					}
					m++
				}
				if n != m {
					t.Fatalf("attempt %d: Len after Close returned %d, then %d values were drained", i, n, m)
				}
			}
		})
	}
}

// TestLinzReproFullThenEmpty: on a channel of capacity 1 with one other
// goroutine sending a single value and nobody else receiving, TrySend
// reporting full means that value was buffered at that instant, so a
// TryRecv after it must find it. Found as (cap=1):
//
//	client 1 TrySend(1000006) → ok [35,55]
//	client 0 TrySend(12) → full [38,39]
//	client 0 TryRecv() → empty [40,41]
//	client 0 Recv() → 1000006 [42,43]
func TestLinzReproFullThenEmpty(t *testing.T) {
	attempts := linzScale(5000)
	for i := range attempts {
		c := chans.New[int](1)
		sent := make(chan error)
		go func() { sent <- c.Send(1) }()
		for range i % 4 {
			runtime.Gosched()
		}
		e1 := c.TrySend(2)
		v, e2 := c.TryRecv()
		c.Close()
		for {
			if _, ok := c.Recv(); !ok {
				break
			}
		}
		<-sent
		if e1 == chans.ErrFull && e2 == chans.ErrEmpty {
			t.Fatalf("attempt %d: TrySend reported full, then TryRecv reported empty (%v), with the only other value in flight", i, v)
		}
	}
}
