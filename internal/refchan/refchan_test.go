package refchan_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/scalable-go/chans/internal/linz"
	"github.com/scalable-go/chans/internal/refchan"
)

var errs = linz.Errors{Closed: refchan.ErrClosed, Full: refchan.ErrFull, Empty: refchan.ErrEmpty}

var kinds = []int{0, 1, 2, 3, 64, refchan.Unbounded}

func kindName(k int) string {
	if k == refchan.Unbounded {
		return "cap=unbounded"
	}
	return fmt.Sprintf("cap=%d", k)
}

func self[T any](ch linz.Chan[T]) func(int) linz.Ops[T] {
	return func(int) linz.Ops[T] { return ch }
}

// check fails t when the history is not linearizable, leaving the verdict
// under t.TempDir().
func check(t *testing.T, k int, ops []porcupine.Operation, name string) linz.Verdict {
	t.Helper()
	v := linz.Check(k, ops, 10*time.Second)
	return v
}

func report(t *testing.T, v linz.Verdict, name string) string {
	t.Helper()
	path, err := v.Write(t.TempDir(), name)
	if err != nil {
		t.Fatalf("writing verdict: %v", err)
	}
	return path
}

// TestReferenceLinearizable runs random histories of the reference channel
// for every kind: the checker must accept them all.
func TestReferenceLinearizable(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	for _, k := range kinds {
		t.Run(kindName(k), func(t *testing.T) {
			ops := 0
			for seed := range n {
				cfg := linz.Config{Clients: 1 + seed%4, Ops: 30, Seed: uint64(seed), CloseOdds: 300, Rescue: seed%3 != 0}
				ch := refchan.New[int](k)
				if seed%2 == 0 {
					cfg.Select = ch.Select
				}
				h := linz.Run(cfg, errs, ch, self[int](ch))
				ops += len(h)
				v := check(t, k, h, "")
				switch v.Result {
				case porcupine.Illegal:
					t.Fatalf("seed %d: reference history rejected (%s); see %s", seed, v.Problem, report(t, v, "reference"))
				case porcupine.Unknown:
					t.Logf("seed %d: check timed out", seed)
				}
			}
			t.Logf("%d histories, %d operations accepted", n, ops)
		})
	}
}

// mutantKinds lists the capacities each mutation is tried with. SpuriousEmpty
// is invisible on rendezvous channels (see linz's rendezvous check), and
// EarlySend is a rendezvous bug.
func mutantKinds(m refchan.Mutation) []int {
	switch m {
	case refchan.SpuriousEmpty, refchan.SelectBoth:
		// SelectBoth needs a receiver and a sender waiting at once to
		// fire on a rendezvous channel, which random histories rarely
		// give it.
		return []int{1, 3, refchan.Unbounded}
	case refchan.EarlySend:
		return []int{0}
	}
	return []int{0, 1, 3, refchan.Unbounded}
}

// TestMutantsRejected runs random concurrent histories of each mutant until
// the checker rejects one; a mutant that survives them all fails the test.
func TestMutantsRejected(t *testing.T) {
	const tries = 300
	for _, m := range refchan.Mutations {
		for _, k := range mutantKinds(m) {
			t.Run(m.String()+"/"+kindName(k), func(t *testing.T) {
				for seed := range tries {
					cfg := linz.Config{Clients: 1 + seed%4, Ops: 30, Seed: uint64(seed), CloseOdds: 300, Rescue: seed%3 != 0}
					ch := refchan.NewMutant[int](m, k)
					if m == refchan.SelectBoth {
						cfg.Select = ch.Select
					}
					h := linz.Run(cfg, errs, ch, self[int](ch))
					v := check(t, k, h, "")
					if v.Result == porcupine.Illegal {
						t.Logf("rejected at history %d (%d ops): %s", seed+1, len(h), firstLine(v))
						return
					}
				}
				t.Fatalf("mutant %v survived %d histories", m, tries)
			})
		}
	}
}

func firstLine(v linz.Verdict) string {
	if v.Problem != "" {
		return v.Problem
	}
	return "no linearization"
}

// TestMutantsRejectedSequential drives each mutant through a fixed
// one-goroutine script that exposes it, so the rejection does not depend on
// scheduling at all.
func TestMutantsRejectedSequential(t *testing.T) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	type selFunc = linz.SelectFunc[int]
	scripts := map[refchan.Mutation]func(c *linz.Client[int], sel selFunc){
		refchan.Drop:          func(c *linz.Client[int], _ selFunc) { c.Send(1); c.Send(2); c.Send(3) },
		refchan.Duplicate:     func(c *linz.Client[int], _ selFunc) { sendN(c, 4); c.Recv(); c.Recv(); c.Recv(); c.Recv() },
		refchan.Swap:          func(c *linz.Client[int], _ selFunc) { sendN(c, 4); c.Recv(); c.Recv(); c.Recv(); c.Recv() },
		refchan.SpuriousEmpty: func(c *linz.Client[int], _ selFunc) { sendN(c, 4); c.TryRecv(); c.TryRecv(); c.TryRecv() },
		refchan.CancelledSend: func(c *linz.Client[int], _ selFunc) {
			c.SendContext(done, 1)
			c.SendContext(done, 2)
			c.SendContext(done, 3)
		},
		refchan.CancelledRecv: func(c *linz.Client[int], _ selFunc) {
			sendN(c, 4)
			c.RecvContext(done)
			c.RecvContext(done)
			c.RecvContext(done)
		},
		refchan.EarlySend: func(c *linz.Client[int], _ selFunc) { c.Send(1) },
		refchan.SelectBoth: func(c *linz.Client[int], sel selFunc) {
			sendN(c, 2)
			c.Select(sel, nil, 101, true)
			c.Select(sel, nil, 102, true)
			c.Select(sel, nil, 103, true)
		},
	}
	for _, m := range refchan.Mutations {
		k := refchan.Unbounded
		if m == refchan.EarlySend {
			k = 0
		}
		ch := refchan.NewMutant[int](m, k)
		h := linz.NewHistory(errs)
		c := linz.NewClient[int](h, ch, ch)
		scripts[m](c, ch.Select)
		c.Close()
		for {
			if _, ok := c.Recv(); !ok {
				break
			}
		}
		if v := linz.Check(k, h.Operations(), 10*time.Second); v.Result != porcupine.Illegal {
			t.Errorf("%v: sequential history accepted:\n%s", m, linz.Dump(v.Ops))
		}
		// The same script against the reference channel must pass.
		ref := refchan.New[int](k)
		if m == refchan.EarlySend {
			continue // a lone Send on a rendezvous channel would block
		}
		h = linz.NewHistory(errs)
		c = linz.NewClient[int](h, ref, ref)
		scripts[m](c, ref.Select)
		c.Close()
		for {
			if _, ok := c.Recv(); !ok {
				break
			}
		}
		if v := linz.Check(k, h.Operations(), 10*time.Second); v.Result != porcupine.Ok {
			t.Errorf("%v: reference run of the script rejected (%s); see %s", m, v.Problem, report(t, v, "ref"))
		}
	}
}

func sendN(c *linz.Client[int], n int) {
	for i := 1; i <= n; i++ {
		c.Send(i)
	}
}

// TestVerdictWrite checks that a rejected history leaves a readable trail.
func TestVerdictWrite(t *testing.T) {
	for _, k := range []int{0, 2} {
		ch := refchan.NewMutant[int](refchan.Drop, k)
		h := linz.NewHistory(errs)
		c := linz.NewClient[int](h, ch, ch)
		c.TrySend(1)
		c.TrySend(2)
		c.TrySend(3)
		c.Close()
		c.Recv()
		v := linz.Check(k, h.Operations(), time.Second)
		if v.Result != porcupine.Illegal {
			t.Fatalf("cap=%d: dropped value not noticed", k)
		}
		path := report(t, v, "drop")
		t.Logf("cap=%d: %s (%s)", k, path, firstLine(v))
	}
}

// TestNoLeak checks that the histories above leave no goroutine behind.
func TestNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for _, k := range kinds {
		ch := refchan.New[int](k)
		linz.Run(linz.Config{Clients: 4, Ops: 30, Seed: 1}, errs, ch, self[int](ch))
	}
	waitGoroutines(t, before)
}

// waitGoroutines waits, a bounded number of times, for the goroutine count
// to fall back to n (timer callbacks of expired contexts may still be
// finishing), and fails if it does not.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	for i := 0; ; i++ {
		if runtime.NumGoroutine() <= n {
			return
		}
		if i == 1000 {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines left, want %d:\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(time.Millisecond)
	}
}
