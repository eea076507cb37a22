package refchan_test

import (
	"context"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/scalable-go/chans/internal/linz"
	"github.com/scalable-go/chans/internal/refchan"
)

// batchConfig is the shape of random history seed with batch calls: one
// step in three of the kinds with a batch form is a batch.
func batchConfig(seed int) linz.Config {
	return linz.Config{Clients: 1 + seed%4, Ops: 30, Seed: uint64(seed), CloseOdds: 300, Rescue: seed%3 != 0, Batch: 3}
}

// TestReferenceBatchLinearizable runs random histories with batch calls
// (and, every other one, selects) of the reference channel for every kind:
// the checker must accept them all.
func TestReferenceBatchLinearizable(t *testing.T) {
	n := 150
	if testing.Short() {
		n = 30
	}
	for _, k := range kinds {
		t.Run(kindName(k), func(t *testing.T) {
			ops, batched := 0, 0
			for seed := range n {
				cfg := batchConfig(seed)
				ch := refchan.New[int](k)
				if seed%2 == 0 {
					cfg.Select = ch.Select
				}
				h := linz.Run(cfg, errs, ch, self[int](ch))
				ops += len(h)
				for _, op := range h {
					if op.Output.(linz.Ret).Batch != (linz.Batch{}) {
						batched++
					}
				}
				v := linz.Check(k, h, 10*time.Second)
				switch v.Result {
				case porcupine.Illegal:
					t.Fatalf("seed %d: reference history rejected (%s); see %s", seed, v.Problem, report(t, v, "reference-batch"))
				case porcupine.Unknown:
					t.Logf("seed %d: check timed out", seed)
				}
				samePlainVerdict(t, k, h, v.Result)
			}
			t.Logf("%d histories, %d operations accepted, %d of them values of batch calls", n, ops, batched)
		})
	}
}

// TestBatchMutantsRejected runs random histories with batch calls of each
// batch mutant, on every kind, until the checker rejects one; a mutant
// that survives them all fails the test.
func TestBatchMutantsRejected(t *testing.T) {
	const tries = 300
	for _, m := range refchan.BatchMutations {
		for _, k := range []int{0, 1, 3, refchan.Unbounded} {
			t.Run(m.String()+"/"+kindName(k), func(t *testing.T) {
				for seed := range tries {
					ch := refchan.NewMutant[int](m, k)
					h := linz.Run(batchConfig(seed), errs, ch, self[int](ch))
					if v := linz.Check(k, h, 10*time.Second); v.Result == porcupine.Illegal {
						t.Logf("rejected at history %d (%d ops): %s", seed+1, len(h), firstLine(v))
						samePlainVerdict(t, k, h, v.Result)
						return
					}
				}
				t.Fatalf("mutant %v survived %d histories", m, tries)
			})
		}
	}
}

// TestBatchMutantsRejectedSequential drives each batch mutant through a
// one-goroutine script whose third batch call the mutation breaks: the
// checker must reject the history, accept the same script run against the
// reference channel, and accept the mutant's history once its batch places
// are stripped (one operation per value with the batch's interval and no
// order among them): the batch rule is what catches the reordering.
func TestBatchMutantsRejectedSequential(t *testing.T) {
	scripts := map[refchan.Mutation]func(c *linz.Client[int]){
		refchan.BatchSendSwap: func(c *linz.Client[int]) {
			for i := range 3 {
				c.SendMany([]int{10*i + 1, 10*i + 2, 10*i + 3})
			}
			for range 9 {
				c.Recv()
			}
		},
		refchan.BatchRecvSwap: func(c *linz.Client[int]) {
			for i := 1; i <= 9; i++ {
				c.Send(i)
			}
			for range 3 {
				c.RecvMany(make([]int, 3))
			}
		},
	}
	run := func(ch linz.Chan[int], script func(*linz.Client[int])) []porcupine.Operation {
		h := linz.NewHistory(errs)
		c := linz.NewClient[int](h, ch, ch)
		script(c)
		c.Close()
		for {
			if _, ok := c.Recv(); !ok {
				break
			}
		}
		return h.Operations()
	}
	const k = refchan.Unbounded
	for _, m := range refchan.BatchMutations {
		t.Run(m.String(), func(t *testing.T) {
			ops := run(refchan.NewMutant[int](m, k), scripts[m])
			if v := linz.Check(k, ops, 10*time.Second); v.Result != porcupine.Illegal {
				t.Errorf("history accepted:\n%s", linz.Dump(ops))
			}
			if v := linz.Check(k, linz.StripBatches(ops), 10*time.Second); v.Result != porcupine.Ok {
				t.Errorf("stripped of its batch places, the history is rejected too: the script does not isolate the batch rule")
			}
			if v := linz.Check(k, run(refchan.New[int](k), scripts[m]), 10*time.Second); v.Result != porcupine.Ok {
				t.Errorf("reference run of the script rejected (%s); see %s", v.Problem, report(t, v, "ref-batch"))
			}
		})
	}
}

// samePlainVerdict checks, for a buffered or unbounded channel, that the
// verdict Check gave for h is the one Porcupine gives with the batch rule
// alone, on h as recorded: the orders Check derives and the intervals it
// narrows (linz.NarrowBatches) only make the search faster. Without them
// some histories take Porcupine far longer, so the comparison gives up
// after a second (and says nothing then).
func samePlainVerdict(t *testing.T, k int, h []porcupine.Operation, got porcupine.CheckResult) {
	t.Helper()
	if k == 0 || got == porcupine.Unknown {
		return
	}
	plain := porcupine.CheckOperationsTimeout(linz.Batched(linz.Model(k)), h, time.Second)
	if plain != porcupine.Unknown && plain != got {
		t.Fatalf("Check says %v, Porcupine with the batch rule alone %v:\n%s", got, plain, linz.Dump(h))
	}
}

// TestBatchOrdersKeepVerdicts is a differential test of the orders and
// narrowed intervals that linz.Check derives for histories with batch
// calls: on random histories with batch calls of the reference channel and
// of every mutant (buffered and unbounded kinds), Check must give the
// verdict that Porcupine gives with the batch rule alone on the history as
// recorded, legal or not.
func TestBatchOrdersKeepVerdicts(t *testing.T) {
	n := 40
	if testing.Short() {
		n = 8
	}
	muts := append([]refchan.Mutation{-1}, refchan.Mutations...)
	muts = append(muts, refchan.BatchMutations...)
	compared, illegal := 0, 0
	for _, m := range muts {
		if m == refchan.EarlySend {
			continue // rendezvous only: no orders are derived there
		}
		for _, k := range []int{1, 3, refchan.Unbounded} {
			for seed := range n {
				var ch interface {
					linz.Chan[int]
					linz.BatchOps[int]
					Select(ctx context.Context, v int, block bool) (int, int, bool, error)
				}
				if m < 0 {
					ch = refchan.New[int](k)
				} else {
					ch = refchan.NewMutant[int](m, k)
				}
				cfg := batchConfig(seed)
				if seed%2 == 0 {
					cfg.Select = ch.Select
				}
				h := linz.Run(cfg, errs, ch, self[int](ch))
				v := linz.Check(k, h, 10*time.Second)
				plain := porcupine.CheckOperationsTimeout(linz.Batched(linz.Model(k)), h, time.Second)
				if v.Result == porcupine.Unknown || plain == porcupine.Unknown {
					continue
				}
				compared++
				if plain == porcupine.Illegal {
					illegal++
				}
				if v.Result != plain {
					t.Fatalf("mutation %d, %s, seed %d: Check says %v, Porcupine with the batch rule alone %v:\n%s",
						m, kindName(k), seed, v.Result, plain, linz.Dump(h))
				}
			}
		}
	}
	t.Logf("%d verdicts compared, %d of them illegal", compared, illegal)
	if illegal == 0 || illegal == compared {
		t.Fatalf("the comparison needs legal and illegal histories: %d of %d illegal", illegal, compared)
	}
}
