package chans_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/sched"
)

// rejoinRig is a select over receiving from a rendezvous work channel and a
// rendezvous quit channel, run in goroutines that report the case that won.
type rejoinRig struct {
	work, quit *chans.Chan[int]
	cases      []chans.Case
	got        int // what the quit case received
	res        chan int
	wg         sync.WaitGroup
}

func newRejoinRig() *rejoinRig {
	r := &rejoinRig{work: chans.New[int](0), quit: chans.New[int](0), res: make(chan int, 1)}
	r.cases = []chans.Case{chans.OnRecv(r.work, nil), chans.OnRecv(r.quit, func(v int, _ bool) { r.got = v })}
	return r
}

// selectOnce starts one select; its result arrives on r.res.
func (r *rejoinRig) selectOnce() {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.res <- chans.Select(r.cases...)
	}()
}

// parkAndWakeByWork runs one select that parks on both channels and is
// woken by a send on work, so that it gives up its cell of quit.
func (r *rejoinRig) parkAndWakeByWork(t *testing.T) {
	t.Helper()
	r.selectOnce()
	r.untilRegistered(t)
	if err := r.work.Send(1); err != nil {
		t.Fatal(err)
	}
	if j := <-r.res; j != 0 {
		t.Fatalf("the select returned case %d, want the work case", j)
	}
}

// untilRegistered waits until the select has registered on both channels.
// The send that follows may still find it registering, not parked: it then
// marks the select to register again, and the select ends the same way.
func (r *rejoinRig) untilRegistered(t *testing.T) {
	t.Helper()
	eventually(t, "the select registered on both channels", func() bool {
		return chans.RecvRegistered(r.work) && chans.RecvRegistered(r.quit)
	})
}

// sendMeets sends v on quit from another goroutine and checks that the
// select started last returns the quit case with v, and the send nil.
func (r *rejoinRig) sendMeets(t *testing.T, v int) {
	t.Helper()
	sent := make(chan error, 1)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		sent <- r.quit.Send(v)
	}()
	var j int
	eventually(t, "the select met the send", func() bool {
		select {
		case j = <-r.res:
			return true
		default:
			return false
		}
	})
	if j != 1 || r.got != v {
		t.Fatalf("the select returned case %d with %d, want case 1 with %d", j, r.got, v)
	}
	if err := <-sent; err != nil {
		t.Fatalf("the send: %v", err)
	}
}

// close ends the rig: closing both channels releases any select or send
// still blocked (after a failure), and every goroutine is waited for.
func (r *rejoinRig) close() {
	r.work.Close()
	r.quit.Close()
	r.wg.Wait()
}

// TestSelectOnIdleChannelTakesItsCellBack runs selects over a busy and an
// idle rendezvous channel, each parking and woken by the busy one, as a
// worker selecting over a work channel and a quit channel does. Each one
// gives its registration on the idle channel up; the next takes that cell
// back rather than a new ticket, so the idle channel hands out one receive
// ticket in all and keeps reusing its segments. (Taking a new ticket each
// time, it handed out one per select, filled its segments with given-up
// cells, and stopped reusing segments at the first one removed.) The last
// select is woken by the idle channel, and a select after Close finds it
// closed: the cell taken back still serves its sender and Close.
func TestSelectOnIdleChannelTakesItsCellBack(t *testing.T) {
	r := newRejoinRig()
	defer r.close()
	const rounds = 600 // more than two segments' worth of cells
	for range rounds {
		r.parkAndWakeByWork(t)
	}
	if n := chans.RecvTickets(r.quit); n != 1 {
		t.Errorf("the idle channel handed out %d receive tickets to %d selects that gave their cell up; want 1", n, rounds)
	}
	if !chans.ReusesSegments(r.quit) {
		t.Error("the idle channel stopped reusing its segments")
	}

	r.selectOnce()
	r.untilRegistered(t)
	if err := r.quit.Send(42); err != nil {
		t.Fatal(err)
	}
	if j := <-r.res; j != 1 || r.got != 42 {
		t.Fatalf("after a send on the idle channel the select returned case %d with %d, want case 1 with 42", j, r.got)
	}

	r.parkAndWakeByWork(t)
	r.selectOnce()
	r.untilRegistered(t)
	r.quit.Close()
	if j := <-r.res; j != 1 {
		t.Fatalf("after Close of the idle channel the select returned case %d, want case 1", j)
	}
}

// TestSelectDoesNotTakeBackCellItsSenderPassed stages the case where a
// select must not take its given-up cell back: the sender of that cell has
// taken its ticket since, may have seen the cell given up, and is about to
// take the next ticket. A select that took the cell back would wait there
// for a sender that has gone on, which then parks one cell on, waiting for
// a receiver that never comes.
func TestSelectDoesNotTakeBackCellItsSenderPassed(t *testing.T) {
	r := newRejoinRig()
	defer r.close()
	r.parkAndWakeByWork(t)       // the select gave its quit cell (ticket 0) up
	chans.TakeSendTicket(r.quit) // the sender of that cell saw it given up

	r.selectOnce()
	r.untilRegistered(t)
	r.sendMeets(t, 7) // the same sender, at its next ticket
}

// TestSelectLooksAgainAfterTakingCellBack stops a select between its
// first look at the send counter, which allows it to take its given-up cell
// back, and the move of the cell; there the cell's sender takes its ticket
// and finds the cell given up (builds with chans_perturb only). The select's
// look after the move must see that sender and give the cell up again;
// otherwise it waits in a cell that sender has left, while the sender's
// next attempt waits one cell on.
func TestSelectLooksAgainAfterTakingCellBack(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the chans_perturb build, whose perturbation points can stop an operation")
	}
	r := newRejoinRig()
	defer r.close()
	r.parkAndWakeByWork(t) // the select gave its quit cell (ticket 0) up

	stop := chans.OnRejoinWindow[int](r.cases[1], func() { chans.TakeSendTicket(r.quit) })
	t.Cleanup(func() { stop() }) // also on failure: a hook left set ends perturbation for later tests
	r.selectOnce()
	r.untilRegistered(t)
	if !stop() {
		t.Fatal("the select did not pass the point between its first look and the move: the test does not test the second look")
	}
	r.sendMeets(t, 7) // the same sender, at its next ticket
}

// TestSelectDoesNotTakeBackCellOfRemovedSegment: the segment of a select's
// given-up cell has all its other cells given up too, and is removed from
// the list, before the select registers again. Sends no longer look in a
// removed segment, so a select that took its cell back there would wait
// while a send parks further on.
func TestSelectDoesNotTakeBackCellOfRemovedSegment(t *testing.T) {
	r := newRejoinRig()
	defer r.close()
	chans.GiveUpRecvCells(r.quit, chans.SegSize) // the first segment (kept: the send root names it)
	r.parkAndWakeByWork(t)                       // the select gave up the first cell of the second
	chans.GiveUpRecvCells(r.quit, chans.SegSize) // the rest of the second, and one past it
	if chans.ReusesSegments(r.quit) {
		t.Fatal("no segment was removed: the test does not test removal")
	}

	r.selectOnce()
	eventually(t, "the select registered on work", func() bool { return chans.RecvRegistered(r.work) })
	r.sendMeets(t, 7)
}

// TestSelectRejoinStress has workers loop over a Selector on two shared
// rendezvous channels, one busy and one that senders use only now and then,
// so that the workers' cases keep giving cells up and taking them back while
// sends come at random moments; then both channels are closed. Every value
// sent must be received exactly once, by a worker's select.
func TestSelectRejoinStress(t *testing.T) {
	const workers, senders = 4, 3
	n, rare := 20000, 50 // per sender: values on the busy channel, then one on the rare one per rare busy ones
	if raceEnabled {
		n = 4000
	}
	if testing.Short() {
		n /= 4
	}
	busy, rareCh := chans.New[int](0), chans.New[int](0)
	got := make([][]int, workers)
	var wg, sendWG sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			open := 2
			var sel *chans.Selector
			recv := func(j int) func(int, bool) {
				return func(v int, ok bool) {
					if ok {
						got[w] = append(got[w], v)
						return
					}
					sel.Disable(j)
					open--
				}
			}
			sel = chans.NewSelector(chans.OnRecv(busy, recv(0)), chans.OnRecv(rareCh, recv(1)))
			for open > 0 {
				sel.Select()
			}
		}()
	}
	for s := range senders {
		sendWG.Add(1)
		go func() {
			defer sendWG.Done()
			for i := range n {
				v := s<<32 | i<<1
				if err := busy.Send(v); err != nil {
					t.Errorf("Send on the busy channel: %v", err)
					return
				}
				if i%rare == 0 {
					if err := rareCh.Send(v | 1); err != nil {
						t.Errorf("Send on the rare channel: %v", err)
						return
					}
				}
			}
		}()
	}
	sendWG.Wait()
	busy.Close()
	rareCh.Close()
	wg.Wait()

	seen := make(map[int]int)
	for _, g := range got {
		for _, v := range g {
			seen[v]++
		}
	}
	want := senders * (n + (n+rare-1)/rare)
	if len(seen) != want {
		t.Errorf("received %d distinct values, want %d", len(seen), want)
	}
	for v, k := range seen {
		if k != 1 {
			t.Errorf("value %#x received %d times", v, k)
		}
	}
	if err := chans.CheckInvariants(busy); err != nil {
		t.Error(err)
	}
	if err := chans.CheckInvariants(rareCh); err != nil {
		t.Error(err)
	}
}

// TestSelectDoesNotTakeBackCellUnderRetire stops a retire of the segment of
// a select's given-up cell between its scan of the cells, which found them
// all given up, and its look at the segment's references (builds with
// chans_perturb). There the select registers again, and sends that found
// their cells given up move the send root past the segment; the retire
// then finds nothing referencing it. A select that took its cell back in
// that window would wait in a retired segment that no send or Close visits
// again.
func TestSelectDoesNotTakeBackCellUnderRetire(t *testing.T) {
	if !sched.Enabled {
		t.Skip("needs the chans_perturb build, whose perturbation points can stop an operation")
	}
	r := newRejoinRig()
	defer r.close()
	r.parkAndWakeByWork(t)                       // the select gave cell 0 up
	chans.GiveUpRecvCells(r.quit, chans.SegSize) // and the rest of its segment, and one past it
	stop := chans.OnReclaimWindow(r.quit, func() {
		r.selectOnce()
		// Registered on both, on quit with a new ticket: a case that took
		// its cell back here would leave R where it is.
		eventually(t, "the select registered afresh on quit", func() bool {
			return chans.RecvTickets(r.quit) == chans.SegSize+2 && chans.RecvRegistered(r.work)
		})
		chans.SkipSends(r.quit, chans.SegSize+1) // the sender of cell 0 stalls; the rest go on
	})
	t.Cleanup(func() { stop() }) // also on failure: a hook left set ends perturbation for later tests
	chans.Reclaim(r.quit)
	if !stop() {
		t.Fatal("no retire reached the point between its scan and its look at references: the test does not test the race")
	}
	if chans.CursorID(r.quit) == 0 {
		t.Fatal("the retire did not take the first segment: the test does not test the race")
	}
	r.sendMeets(t, 7)
}

// TestIdleCaseKeepsNoSegmentAlive: a select case left idle after it gave a
// cell up must not keep that cell's segment in memory once the channel has
// retired it (nor, through it, the segments after it).
func TestIdleCaseKeepsNoSegmentAlive(t *testing.T) {
	r := newRejoinRig()
	defer r.close()
	r.parkAndWakeByWork(t) // the select gave cell 0 up
	alive := chans.GivenUpSegmentAlive[int](r.cases[1])
	if !alive() {
		t.Fatal("the case kept no segment: the test does not test what it keeps")
	}
	chans.GiveUpRecvCells(r.quit, chans.SegSize) // the rest of the segment, and one past it
	chans.SkipSends(r.quit, chans.SegSize+1)
	chans.Reclaim(r.quit)
	runtime.GC()
	runtime.GC()
	if alive() {
		t.Fatal("the segment of an idle case's given-up cell outlived its retirement and two collections")
	}
}
