package linz

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anishathalye/porcupine"
)

// Config shapes the random histories of Run.
type Config struct {
	Clients int    // goroutines running random operations
	Ops     int    // operations per client
	Seed    uint64 // chooses every client's script (not the interleaving)
	// CloseOdds makes one script operation in CloseOdds a Close, so that
	// some histories close while operations are in flight; 0 closes only at
	// the end.
	CloseOdds int
	// NoLen leaves Len out of the scripts.
	NoLen bool
	// Rescue lets the final client free clients that all wait, up to Ops
	// times, with a TryRecv or TrySend of its own, before it closes.
	Rescue bool
	// Select, if set, adds selects (send and receive on the channel at
	// once) to the scripts.
	Select SelectFunc[int]
	// SelectTimeout, if set, adds selects with a third case that fires on
	// its own (SelectTimeout): a timeout of up to MaxTimeout (sometimes
	// zero), a done channel already closed, or one closed up to MaxTimeout
	// after the call starts.
	SelectTimeout TimeoutSelectFunc[int]
	// MaxTimeout bounds the random deadlines of context operations
	// (default 200µs). The deadlines shape the history; nothing is asserted
	// about timing.
	MaxTimeout time.Duration
	// Batch makes one step in Batch of the kinds with a batch form a batch
	// call (batch.go); 0 makes none. The channel's Ops must then have the
	// BatchOps too.
	Batch int
}

// step is one scripted operation.
type step struct {
	sig  sigMode                // SelectTimeout: its third case
	tsel TimeoutSelectFunc[int] // SelectTimeout: the select
	kind Kind
	ctx  ctxMode
	d    time.Duration
	n    int // values of a batch call (batch.go); 0 for a single call
}

// sigMode is the third case of a SelectTimeout step.
type sigMode uint8

const (
	sigTimeout    sigMode = iota // a timeout of d
	sigDoneClosed                // a done channel closed before the call
	sigDoneLater                 // a done channel closed d after the call starts
)

type ctxMode uint8

const (
	ctxDone    ctxMode = iota // cancelled before the call
	ctxTimeout                // a short random deadline
	ctxNever                  // never done: the call may block like Send/Recv
)

func script(cfg Config, client int) []step {
	r := rand.New(rand.NewPCG(cfg.Seed, uint64(client)+1))
	maxT := cfg.MaxTimeout
	if maxT <= 0 {
		maxT = 200 * time.Microsecond
	}
	s := make([]step, cfg.Ops)
	for i := range s {
		if cfg.CloseOdds > 0 && r.IntN(cfg.CloseOdds) == 0 {
			s[i] = step{kind: Close}
			continue
		}
		m := 20
		if cfg.Select != nil {
			m = 24
		}
		if cfg.SelectTimeout != nil {
			m += 3
		}
		n := r.IntN(m)
		switch {
		case n >= m-3 && cfg.SelectTimeout != nil:
			s[i].kind, s[i].tsel = SelectTimeout, cfg.SelectTimeout
			s[i].sig = sigMode(r.IntN(3))
			if s[i].sig != sigDoneClosed && r.IntN(4) != 0 { // else d == 0: ready at once
				s[i].d = time.Duration(r.Int64N(int64(maxT)))
			}
		case n >= 20:
			s[i].kind = []Kind{Select, Select, SelectCtx, TrySelect}[n-20]
		case n == 19 && !cfg.NoLen:
			s[i].kind = Len
		case n < 9:
			s[i].kind = []Kind{Send, SendCtx, TrySend}[n%3]
		default:
			s[i].kind = []Kind{Recv, RecvCtx, TryRecv}[n%3]
		}
		if s[i].kind == SendCtx || s[i].kind == RecvCtx || s[i].kind == SelectCtx {
			switch n := r.IntN(4); n {
			case 0:
				s[i].ctx = ctxDone
			case 1, 2:
				s[i].ctx = ctxTimeout
				s[i].d = time.Duration(r.Int64N(int64(maxT)))
			default:
				s[i].ctx = ctxNever
			}
		}
		batchStep(cfg, r, &s[i])
	}
	return s
}

// blocks reports whether st may wait for another client.
func (st step) blocks() bool {
	switch st.kind {
	case Send, Recv, Select:
		return true
	case SendCtx, RecvCtx, SelectCtx:
		return st.ctx == ctxNever
	}
	return false
}

// Run drives ch through one random concurrent history and returns it. Each
// of cfg.Clients goroutines runs its script through ops(client) (ch itself,
// or a Handle of it); values are unique positive ints. Once every client has
// finished or sits in a call that may wait for others, and no call has
// completed over a few hundred yields, a final client either frees a waiter
// (cfg.Rescue) or closes ch and receives
// until it reports closed, so that every call returns and every buffered
// value is accounted for. Closing early is harmless: any moment is a legal
// moment to close, so the heuristic shapes histories but cannot make a
// correct channel fail.
func Run(cfg Config, errs Errors, ch Chan[int], ops func(client int) Ops[int]) []porcupine.Operation {
	h := NewHistory(errs)
	n := cfg.Clients
	var (
		wg       sync.WaitGroup
		idle     atomic.Int64 // clients finished or inside a call that may wait
		progress atomic.Int64 // calls completed
		poke     = make(chan struct{}, 1)
	)
	notify := func() {
		select {
		case poke <- struct{}{}:
		default:
		}
	}
	clients := make([]*Client[int], n)
	for i := range clients {
		clients[i] = NewClient(h, ops(i), ch)
	}
	for i, c := range clients {
		steps := script(cfg, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, st := range steps {
				if st.blocks() {
					idle.Add(1)
					notify()
				}
				runStep(c, cfg.Select, st, i*1_000_000+j+1)
				if st.blocks() {
					idle.Add(-1)
				}
				progress.Add(1)
			}
			idle.Add(1)
			notify()
		}()
	}
	last := NewClient(h, Ops[int](ch), ch)
	rescues := 0
	for {
		<-poke
		if idle.Load() < int64(n) {
			continue
		}
		p := progress.Load()
		for range 200 {
			runtime.Gosched()
		}
		if idle.Load() != int64(n) || progress.Load() != p {
			notify() // look again: something moved
			continue
		}
		// Every client is done or waits. While budget lasts, free a
		// waiter with a non-blocking call rather than end the history:
		// a value for a waiting receiver, or room for a waiting sender.
		if rescues >= cfg.Ops || !cfg.Rescue {
			break
		}
		rescues++
		if _, err := last.TryRecv(); err != nil {
			if err := last.TrySend(-rescues); err != nil {
				break
			}
		}
		notify()
	}
	last.Close()
	for {
		if _, ok := last.Recv(); !ok {
			break
		}
	}
	wg.Wait()
	return h.Operations()
}

func runStep(c *Client[int], sel SelectFunc[int], st step, v int) {
	if st.n > 0 {
		runBatch(c, st, v)
		return
	}
	switch st.kind {
	case SelectTimeout:
		runSelectTimeout(c, st, v)
	case Select:
		c.Select(sel, nil, v, true)
	case TrySelect:
		c.Select(sel, nil, v, false)
	case SelectCtx:
		ctx, cancel := stepContext(st)
		c.Select(sel, ctx, v, true)
		cancel()
	case Send:
		c.Send(v)
	case TrySend:
		c.TrySend(v)
	case Recv:
		c.Recv()
	case TryRecv:
		c.TryRecv()
	case Close:
		c.Close()
	case Len:
		c.Len()
	case SendCtx, RecvCtx:
		ctx, cancel := stepContext(st)
		if st.kind == SendCtx {
			c.SendContext(ctx, v)
		} else {
			c.RecvContext(ctx)
		}
		cancel()
	}
}

// runSelectTimeout runs a SelectTimeout step: its done channel, if it has
// one, is closed before the call or by a timer d after the call starts.
func runSelectTimeout(c *Client[int], st step, v int) {
	var done chan struct{}
	switch st.sig {
	case sigDoneClosed:
		done = make(chan struct{})
		close(done)
	case sigDoneLater:
		done = make(chan struct{})
		t := time.AfterFunc(st.d, func() { close(done) })
		defer t.Stop()
	}
	c.SelectTimeout(st.tsel, v, st.d, done)
}

func stepContext(st step) (context.Context, context.CancelFunc) {
	switch st.ctx {
	case ctxDone:
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx, cancel
	case ctxTimeout:
		return context.WithTimeout(context.Background(), st.d)
	}
	return context.WithCancel(context.Background())
}
