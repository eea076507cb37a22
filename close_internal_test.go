package chans

import (
	"runtime"
	"testing"
)

// TestLosingCloseKeepsRoomBound replays, step by step, a schedule in which a
// second Close loses the race to the first but records its bound on the room
// after the winner took effect and a receive made room (found in review).
// The send whose ticket predates Close found the channel full at Close, so
// it must fail after Close; a losing Close that raised the bound let it
// deliver into the closed channel.
func TestLosingCloseKeepsRoomBound(t *testing.T) {
	for _, k := range []int{0, 1} {
		c := New[int](k)
		if k > 0 {
			if err := c.TrySend(10); err != nil { // buffer full
				t.Fatal(err)
			}
		}
		// Y: a Send takes its ticket and pauses right after the fetch-and-add.
		yseg := c.sendSeg.Load()
		yt := c.s.Add(1) - 1
		// L: a second Close sees S open and pauses before recording the room.
		if c.s.Load()&closedBit != 0 {
			t.Fatal("closed too early")
		}
		// W: the first Close wins.
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// X: a receive that starts after Close made room (buffered) or waits
		// in the cell Y will come to (rendezvous).
		recvd := make(chan int, 1)
		if k > 0 {
			if v, ok := c.Recv(); !ok || v != 10 {
				t.Fatalf("cap %d: Recv = %v, %v", k, v, ok)
			}
		} else {
			go func() { v, _ := c.Recv(); recvd <- v }()
			for c.r.Load() == 0 {
				runtime.Gosched() // until X has its ticket: it parks in cell 0 or, seeing
				// Close, returns; either way it cannot take Y's value legally
			}
		}
		// L resumes: it records the room it sees now, then its OR fails.
		c.recordRoom()
		if old := c.s.Or(closedBit); old&closedBit == 0 {
			t.Fatal("the losing Close won")
		}
		// Y resumes in its cell.
		seg := c.cellSeg(&c.sendSeg, yseg, yt, &c.s)
		out := c.sendBounded(nil, seg, int(yt&segMask), yt, 20, nil, true)
		if out == outOK {
			t.Errorf("cap %d: a send that found the channel full at Close delivered after it", k)
		}
		if k > 0 {
			if v, err := c.TryRecv(); err != ErrClosed {
				t.Errorf("cap %d: TryRecv after Close = %v, %v; want ErrClosed", k, v, err)
			}
		} else if v := <-recvd; v != 0 {
			t.Errorf("cap 0: the receive that began after Close got %v", v)
		}
	}
}
