package ring_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"go.uber.org/goleak"

	"github.com/scalable-go/chans/internal/linz"
	"github.com/scalable-go/chans/internal/ring"
)

// TestMain fails the binary if goroutines outlive a passing run.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var errs = linz.Errors{Closed: ring.ErrClosed, Full: ring.ErrFull, Empty: ring.ErrEmpty}

// kinds are the capacities tested: the smallest, a few slots, both sides
// of a power of two, and a large one.
var kinds = []int{1, 2, 3, 63, 64, 65, 1024}

// TestLinearizable records random concurrent histories of every kind (sends,
// receives, their Try and Context forms, Close racing them, Len) and asks
// Porcupine whether each is linearizable against the sequential model of a
// buffered channel. RING_LINZ_N sets the histories per kind.
func TestLinearizable(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	if s := os.Getenv("RING_LINZ_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("RING_LINZ_N: %v", err)
		}
	}
	for _, k := range kinds {
		t.Run(fmt.Sprintf("cap=%d", k), func(t *testing.T) {
			ops, unknown := 0, 0
			for seed := range n {
				cfg := linz.Config{Clients: 2 + seed%4, Ops: 30, Seed: uint64(seed), CloseOdds: 300, Rescue: seed%3 != 0}
				c := ring.New[int](k)
				h := linz.Run(cfg, errs, c, func(int) linz.Ops[int] { return c })
				ops += len(h)
				v := linz.Check(k, h, 20*time.Second)
				switch v.Result {
				case porcupine.Illegal:
					path, err := v.Write(t.TempDir(), fmt.Sprintf("ring-cap%d-seed%d", k, seed))
					if os.Getenv("RING_LINZ_DUMP") != "" {
						sort.Slice(h, func(i, j int) bool { return h[i].Call < h[j].Call })
						for _, op := range h {
							t.Logf("c%d [%d,%d] %v -> %+v", op.ClientId, op.Call, op.Return, op.Input, op.Output)
						}
					}
					t.Fatalf("seed %d: history of %d operations is not linearizable: %s (report %s, %v)", seed, len(h), v.Problem, path, err)
				case porcupine.Unknown:
					unknown++
				}
			}
			t.Logf("%d histories, %d operations checked, %d unknown (timed out)", n, ops, unknown)
		})
	}
}

// TestConservation moves values from producers to consumers while sends and
// receives give up at random deadlines and Close comes in the middle: every
// value whose send returned nil is received exactly once, no value whose
// send failed is received, and each consumer sees each producer's values in
// the order they were sent.
func TestConservation(t *testing.T) {
	const producers, consumers, per = 6, 6, 3000
	for _, k := range kinds {
		t.Run(fmt.Sprintf("cap=%d", k), func(t *testing.T) {
			c := ring.New[int](k)
			var wg sync.WaitGroup
			sent := make([][]bool, producers)
			got := make([][]int, consumers)
			errc := make(chan error, producers+consumers)
			var recvd atomic.Int64
			for p := range producers {
				sent[p] = make([]bool, per)
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(p), uint64(k)))
					for i := range per {
						v := p*per + i
						var err error
						switch r.IntN(3) {
						case 0:
							err = c.Send(v)
						case 1:
							err = c.TrySend(v)
						default:
							ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(50))*time.Microsecond)
							err = c.SendContext(ctx, v)
							cancel()
						}
						switch {
						case err == nil:
							sent[p][i] = true
						case errors.Is(err, ring.ErrClosed):
							return
						case errors.Is(err, ring.ErrFull), errors.Is(err, context.DeadlineExceeded):
						default:
							errc <- fmt.Errorf("send: %v", err)
							return
						}
					}
				}()
			}
			var cwg sync.WaitGroup
			for q := range consumers {
				cwg.Add(1)
				go func() {
					defer cwg.Done()
					r := rand.New(rand.NewPCG(uint64(q), 99))
					last := make([]int, producers)
					for i := range last {
						last[i] = -1
					}
					for {
						var v int
						var err error
						switch r.IntN(3) {
						case 0:
							var ok bool
							if v, ok = c.Recv(); !ok {
								err = ring.ErrClosed
							}
						case 1:
							v, err = c.TryRecv()
						default:
							ctx, cancel := context.WithTimeout(context.Background(), time.Duration(r.IntN(50))*time.Microsecond)
							v, err = c.RecvContext(ctx)
							cancel()
						}
						switch {
						case err == nil:
							p, i := v/per, v%per
							if i <= last[p] {
								errc <- fmt.Errorf("consumer %d: producer %d's value %d after %d", q, p, i, last[p])
								return
							}
							last[p] = i
							got[q] = append(got[q], v)
							recvd.Add(1)
						case errors.Is(err, ring.ErrClosed):
							return
						case errors.Is(err, ring.ErrEmpty), errors.Is(err, context.DeadlineExceeded):
						default:
							errc <- fmt.Errorf("recv: %v", err)
							return
						}
					}
				}()
			}
			// Close while values are still moving: once consumers have
			// received a third of what the producers try to send, or once
			// the producers are done, whichever comes first.
			producersDone := make(chan struct{})
			go func() { wg.Wait(); close(producersDone) }()
			for recvd.Load() < producers*per/3 {
				select {
				case <-producersDone:
				default:
					runtime.Gosched()
					continue
				}
				break
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			<-producersDone
			cwg.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			seen := make(map[int]int)
			for _, vs := range got {
				for _, v := range vs {
					seen[v]++
				}
			}
			for p := range producers {
				for i := range per {
					v := p*per + i
					if n := seen[v]; sent[p][i] && n != 1 || !sent[p][i] && n != 0 {
						t.Fatalf("value %d: sent %v, received %d times", v, sent[p][i], n)
					}
				}
			}
		})
	}
}

// TestParkedSendersFirst checks that parked senders are served in the order
// they parked, before any send that began after them: a send that starts
// once another is parked must not take a slot that a receive freed for the
// parked one. Each round fills a channel, parks one sender, then races a
// receiver against a second sender that starts after the first parked.
func TestParkedSendersFirst(t *testing.T) {
	for _, k := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("cap=%d", k), func(t *testing.T) {
			for round := range 2000 {
				c := ring.New[int](k)
				for i := range k {
					if err := c.TrySend(i); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				wg.Add(2)
				go func() { defer wg.Done(); c.Send(100) }() // parks: the channel is full
				for c.ParkedSenders() == 0 {
					runtime.Gosched()
				}
				go func() { defer wg.Done(); c.Send(200) }() // starts after 100 parked
				for i := range k {
					if v, _ := c.Recv(); v != i {
						t.Fatalf("round %d: got %d, want %d", round, v, i)
					}
				}
				a, _ := c.Recv()
				b, _ := c.Recv()
				wg.Wait()
				if a != 100 || b != 200 {
					t.Fatalf("round %d: after the buffered values got %d then %d, want 100 then 200", round, a, b)
				}
			}
		})
	}
}

// TestCloseFailsParkedSenders checks that Close fails the senders parked on
// a full channel, with no receive to rescue them, and that their values are
// never received.
func TestCloseFailsParkedSenders(t *testing.T) {
	for _, k := range []int{1, 2, 64} {
		t.Run(fmt.Sprintf("cap=%d", k), func(t *testing.T) {
			c := ring.New[int](k)
			for i := range k {
				if err := c.TrySend(i); err != nil {
					t.Fatal(err)
				}
			}
			const parked = 5
			errs := make(chan error, parked)
			for i := range parked {
				go func() { errs <- c.Send(1000 + i) }()
			}
			for c.ParkedSenders() < parked {
				runtime.Gosched()
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			for range parked {
				if err := <-errs; !errors.Is(err, ring.ErrClosed) {
					t.Fatalf("parked Send after Close: %v, want ErrClosed", err)
				}
			}
			for i := range k {
				if v, ok := c.Recv(); !ok || v != i {
					t.Fatalf("Recv %d: %d, %v", i, v, ok)
				}
			}
			if v, ok := c.Recv(); ok {
				t.Fatalf("Recv after drain: %d, want closed", v)
			}
		})
	}
}
