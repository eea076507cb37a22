// Package workload runs the channel workloads that cmd/chanbench sweeps and
// the bench package measures: each moves a given number of messages through a
// native Go chan or a chans.Chan and reports the wall time it took.
//
// Every run checks its own result: Result.Messages counts what was actually
// received (or, for the non-blocking and fetch-and-add workloads, what was
// attempted), and Run returns an error if a value was lost, duplicated or
// altered, so a broken channel cannot pass as a fast one.
package workload

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one run.
type Config struct {
	Workload   string // a name from Workloads()
	Impl       string // Native, Chans or ChansHandle
	Cap        int    // 0, 64, 1024, ... or -1 for unbounded (native: a buffer as large as the whole run)
	Goroutines int    // producer+consumer goroutines in total; 0 means the workload's default (2*GOMAXPROCS for mpmc)
	Work       int    // mean local work between operations, in units of ~1 ns busy loop (geometric distribution), 0 = none
	Messages   int    // messages to move in this run
}

// Result is the outcome of one run.
type Result struct {
	Elapsed  time.Duration // wall time from releasing the goroutines to the last one finishing
	Messages int           // messages moved (received, or operations done for tryrecv-empty, trysend-full and faa)
}

// Info describes a workload: its name, a one-line description, and which
// Config fields it reads.
type Info struct {
	Name, Doc                         string
	UsesCap, UsesGoroutines, UsesWork bool
}

// ErrSelectUnavailable was select-quit's answer for the chans implementations
// before chans had select. Run no longer returns it; it stays so that callers
// written against it keep compiling.
var ErrSelectUnavailable = errors.New("workload: select not yet available")

type workload struct {
	Info
	run func(cfg Config) (Result, error)
}

var workloads = []workload{
	{Info{"mpmc", "producers and consumers on one channel, GOMAXPROCS of each by default (a goroutine count is split half and half)", true, true, true}, runMPMC},
	{Info{"mpsc", "producers and one consumer on one channel, the actor pattern; GOMAXPROCS producers by default (a goroutine count includes the consumer)", true, true, true}, runMPSC},
	{Info{"spsc-pair", "one goroutine doing send+receive pairs on a buffered channel (cap > 0 or unbounded)", true, false, true}, runPairs},
	{Info{"pingpong", "two goroutines bouncing a value over two channels; each one-way hop is one message", true, false, true}, runPingPong},
	{Info{"tryrecv-empty", "failing non-blocking receives on an empty channel from GOMAXPROCS goroutines; each attempt is one message", true, true, false}, runTryRecvEmpty},
	{Info{"trysend-full", "failing non-blocking sends on a full channel (cap >= 0) from GOMAXPROCS goroutines; each attempt is one message", true, true, false}, runTrySendFull},
	{Info{"select-quit", "as mpmc, but each consumer selects over the work channel and an idle quit channel of its own, the usual cancellation check", true, true, true}, runSelectQuit},
	{Info{"select-dynamic-4", selectDynamicDoc(4), false, false, false}, runSelectDynamic(4)},
	{Info{"select-dynamic-16", selectDynamicDoc(16), false, false, false}, runSelectDynamic(16)},
	{Info{"select-dynamic-128", selectDynamicDoc(128), false, false, false}, runSelectDynamic(128)},
	{Info{"select-dynamic-1024", selectDynamicDoc(1024), false, false, false}, runSelectDynamic(1024)},
	{Info{"faa", "not a channel: GOMAXPROCS goroutines doing atomic fetch-and-adds on one shared counter, each add one message; the cost of the simplest shared update, for scale (no implementation applies)", false, true, false}, runFAA},
}

// Workloads returns the workloads, in a stable order.
func Workloads() []Info {
	out := make([]Info, len(workloads))
	for i, w := range workloads {
		out[i] = w.Info
	}
	return out
}

// Run runs one workload and returns its wall time. It returns an error for an
// unknown workload or implementation, a configuration the workload cannot run
// (such as spsc-pair on a rendezvous channel), or a run whose messages did not
// all arrive intact. Run collects garbage before starting the clock.
func Run(cfg Config) (Result, error) {
	if err := checkImpl(cfg.Impl); err != nil {
		return Result{}, err
	}
	if cfg.Messages < 0 || cfg.Goroutines < 0 {
		return Result{}, fmt.Errorf("workload: negative Messages (%d) or Goroutines (%d)", cfg.Messages, cfg.Goroutines)
	}
	for _, w := range workloads {
		if w.Name == cfg.Workload {
			if w.UsesWork && cfg.Work > 0 {
				Calibrate()
			}
			return w.run(cfg)
		}
	}
	names := make([]string, len(workloads))
	for i, w := range workloads {
		names[i] = w.Name
	}
	return Result{}, fmt.Errorf("workload: unknown workload %q (want one of %v)", cfg.Workload, names)
}

// share returns the part of n that worker i of k does: n/k, plus one for the
// first n%k workers.
func share(n, k, i int) int {
	s := n / k
	if i < n%k {
		s++
	}
	return s
}

// seed returns the PRNG seed of goroutine i in a run, distinct per goroutine.
func seed(i int) uint64 { return uint64(i)*0x9e3779b97f4a7c15 + 1 }

// gate starts a run's goroutines together: each calls wait, and the driver
// calls start once all are created, after a GC, and reads the clock.
type gate struct{ c chan struct{} }

func newGate() gate  { return gate{make(chan struct{})} }
func (g gate) wait() { <-g.c }
func (g gate) start() time.Time {
	runtime.GC()
	t := time.Now()
	close(g.c)
	return t
}

// triangle is 1+2+...+n, the sum of the values a producer of n messages sends.
func triangle(n int) int { return n * (n + 1) / 2 }

// ---------------------------------------------------------------- producers and consumers

func runMPMC(cfg Config) (Result, error) {
	g := cfg.Goroutines
	if g == 0 {
		g = 2 * runtime.GOMAXPROCS(0)
	}
	p := max(1, g/2)
	return prodCons(cfg, p, max(1, g-p))
}

func runMPSC(cfg Config) (Result, error) {
	g := cfg.Goroutines
	if g == 0 {
		g = runtime.GOMAXPROCS(0) + 1
	}
	return prodCons(cfg, max(1, g-1), 1)
}

// prodCons runs producers that send 1..n (their share of the messages) and
// consumers that receive until the channel is closed, with local work before
// every send and after every receive. The producers' last sends happen before
// Close, so the consumers, draining to the close, receive everything.
func prodCons(cfg Config, producers, consumers int) (Result, error) {
	ch, err := newChannel(cfg.Impl, cfg.Cap, cfg.Messages)
	if err != nil {
		return Result{}, err
	}
	var (
		prod, cons sync.WaitGroup
		count, sum atomic.Int64
		want       int
		g          = newGate()
	)
	for i := range producers {
		n := share(cfg.Messages, producers, i)
		want += triangle(n)
		e, w := ch.endpoint(), NewWork(cfg.Work, seed(i))
		prod.Add(1)
		go func() {
			defer prod.Done()
			g.wait()
			for v := 1; v <= n; v++ {
				w.Do()
				e.send(v)
			}
		}()
	}
	for i := range consumers {
		e, w := ch.endpoint(), NewWork(cfg.Work, seed(producers+i))
		cons.Add(1)
		go func() {
			defer cons.Done()
			g.wait()
			k, s := 0, 0
			for {
				v, ok := e.recv()
				if !ok {
					break
				}
				k++
				s += v
				w.Do()
			}
			count.Add(int64(k))
			sum.Add(int64(s))
		}()
	}
	t := g.start()
	prod.Wait()
	ch.close()
	cons.Wait()
	r := Result{Elapsed: time.Since(t), Messages: int(count.Load())}
	if r.Messages != cfg.Messages || int(sum.Load()) != want {
		return r, fmt.Errorf("workload %s/%s: received %d messages summing to %d, want %d summing to %d",
			cfg.Workload, cfg.Impl, r.Messages, sum.Load(), cfg.Messages, want)
	}
	return r, nil
}

// ---------------------------------------------------------------- one and two goroutines

func runPairs(cfg Config) (Result, error) {
	if cfg.Cap == 0 {
		return Result{}, errors.New("workload: spsc-pair needs a buffered channel (Cap > 0 or -1); a rendezvous send with no receiver never completes")
	}
	ch, err := newChannel(cfg.Impl, cfg.Cap, 1)
	if err != nil {
		return Result{}, err
	}
	e, w := ch.endpoint(), NewWork(cfg.Work, seed(0))
	var sum int
	done := make(chan struct{})
	g := newGate()
	go func() {
		defer close(done)
		g.wait()
		sum = e.pairs(cfg.Messages, &w)
	}()
	t := g.start()
	<-done
	r := Result{Elapsed: time.Since(t), Messages: cfg.Messages}
	ch.close()
	if sum != triangle(cfg.Messages) {
		return r, fmt.Errorf("workload spsc-pair/%s: received values summing to %d, want %d", cfg.Impl, sum, triangle(cfg.Messages))
	}
	return r, nil
}

// runPingPong bounces one value between goroutines a and b: hop h (0, 1, ...)
// carries the value h, from a to b over ab when h is even and back over ba
// when it is odd, with local work before each send. Each side checks that it
// received the hops it expected, in order.
func runPingPong(cfg Config) (Result, error) {
	ab, err := newChannel(cfg.Impl, cfg.Cap, cfg.Messages)
	if err != nil {
		return Result{}, err
	}
	ba, _ := newChannel(cfg.Impl, cfg.Cap, cfg.Messages)
	aSend, aRecv := ab.endpoint(), ba.endpoint()
	bRecv, bSend := ab.endpoint(), ba.endpoint()
	wa, wb := NewWork(cfg.Work, seed(0)), NewWork(cfg.Work, seed(1))
	n := cfg.Messages
	var aGot, bGot, bad atomic.Int64
	var wg sync.WaitGroup
	g := newGate()
	wg.Add(2)
	go func() { // a: sends even hops, receives odd ones
		defer wg.Done()
		g.wait()
		k := 0
		for h := 0; h < n; h += 2 {
			wa.Do()
			aSend.send(h)
			if h+1 < n {
				if v, ok := aRecv.recv(); !ok || v != h+1 {
					bad.Add(1)
				}
				k++
			}
		}
		ab.close()
		aGot.Store(int64(k))
	}()
	go func() { // b: receives even hops until ab closes, answers with the odd ones
		defer wg.Done()
		g.wait()
		k := 0
		for want := 0; ; want += 2 {
			v, ok := bRecv.recv()
			if !ok {
				break
			}
			if v != want {
				bad.Add(1)
			}
			k++
			if v+1 < n {
				wb.Do()
				bSend.send(v + 1)
			}
		}
		bGot.Store(int64(k))
	}()
	t := g.start()
	wg.Wait()
	r := Result{Elapsed: time.Since(t), Messages: int(aGot.Load() + bGot.Load())}
	ba.close()
	if r.Messages != n || bad.Load() != 0 {
		return r, fmt.Errorf("workload pingpong/%s: %d hops arrived (%d out of order), want %d", cfg.Impl, r.Messages, bad.Load(), n)
	}
	return r, nil
}

// ---------------------------------------------------------------- non-blocking failures

func tryGoroutines(cfg Config) int {
	if cfg.Goroutines > 0 {
		return cfg.Goroutines
	}
	return runtime.GOMAXPROCS(0)
}

// runTry runs op (failRecv or failSend) on per-goroutine endpoints, each
// attempt being one message; every attempt must fail.
func runTry(cfg Config, ch channel, op func(e endpoint, n int) int) (Result, error) {
	k := tryGoroutines(cfg)
	var wg sync.WaitGroup
	var succeeded atomic.Int64
	g := newGate()
	for i := range k {
		n, e := share(cfg.Messages, k, i), ch.endpoint()
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.wait()
			succeeded.Add(int64(op(e, n)))
		}()
	}
	t := g.start()
	wg.Wait()
	r := Result{Elapsed: time.Since(t), Messages: cfg.Messages}
	if s := succeeded.Load(); s != 0 {
		return r, fmt.Errorf("workload %s/%s: %d of %d non-blocking operations succeeded, want none", cfg.Workload, cfg.Impl, s, cfg.Messages)
	}
	return r, nil
}

func runTryRecvEmpty(cfg Config) (Result, error) {
	ch, err := newChannel(cfg.Impl, cfg.Cap, 1024) // an empty native channel's buffer size does not matter
	if err != nil {
		return Result{}, err
	}
	defer ch.close()
	return runTry(cfg, ch, endpoint.failRecv)
}

func runTrySendFull(cfg Config) (Result, error) {
	if cfg.Cap < 0 {
		return Result{}, errors.New("workload: trysend-full needs a bounded channel (Cap >= 0); an unbounded one is never full")
	}
	ch, err := newChannel(cfg.Impl, cfg.Cap, 0)
	if err != nil {
		return Result{}, err
	}
	e := ch.endpoint()
	for v := range cfg.Cap {
		e.send(v)
	}
	r, err := runTry(cfg, ch, endpoint.failSend)
	ch.close()
	for range cfg.Cap { // what was buffered is still there, and nothing more
		if _, ok := e.recv(); !ok && err == nil {
			err = fmt.Errorf("workload trysend-full/%s: buffer lost values", cfg.Impl)
		}
	}
	if _, ok := e.recv(); ok && err == nil {
		err = fmt.Errorf("workload trysend-full/%s: buffer gained values", cfg.Impl)
	}
	return r, err
}

// ---------------------------------------------------------------- the floor

func runFAA(cfg Config) (Result, error) {
	k := tryGoroutines(cfg)
	// The counter alone on its lines: the floor measures contention on one
	// word and nothing else.
	ctr := new(Owned[atomic.Uint64])
	var wg sync.WaitGroup
	g := newGate()
	for i := range k {
		n := share(cfg.Messages, k, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.wait()
			for range n {
				ctr.V.Add(1)
			}
		}()
	}
	t := g.start()
	wg.Wait()
	r := Result{Elapsed: time.Since(t), Messages: int(ctr.V.Load())}
	if r.Messages != cfg.Messages {
		return r, fmt.Errorf("workload faa: counter reached %d, want %d", r.Messages, cfg.Messages)
	}
	return r, nil
}
