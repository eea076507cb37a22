package chans

// FromChan returns a channel of the given capacity (as for New) that one
// goroutine feeds, in order, with the values it receives from ch, and
// closes once ch is closed and every value received from it has been sent.
// Through it any native channel, such as a time.Ticker's or one filled by
// signal.Notify, can take part in a select with OnRecv. For a channel that
// is only ever closed (a context's Done, a quit channel), OnDone needs no
// goroutine.
//
// The forwarding costs a goroutine and one value in flight: while the
// returned channel has no room (for capacity 0: until a receiver comes), the
// goroutine holds a value it has received from ch and not yet sent, so ch
// has given up one value more than the returned channel holds. With
// capacity Unbounded the goroutine takes every value ch offers at once.
//
// The goroutine ends when ch is closed. Closing the returned channel
// yourself stops the forwarding: the goroutine drops the value it holds, or
// else the next value it receives from ch, and ends; the values still in ch
// stay there. A goroutine left waiting on a channel that is never closed
// and never sent on again (a stopped Ticker's) lives as long as the
// program, so close ch, or the returned channel and then ch, when you can.
// A nil ch starts no goroutine: the returned channel stays empty and open
// until you close it.
//
// Each value forwarded takes effect as a Send on the returned channel,
// after the goroutine received it from ch; the returned channel's Close
// takes effect after the goroutine saw ch closed.
func FromChan[T any](ch <-chan T, capacity int) *Chan[T] {
	c := New[T](capacity)
	if ch != nil {
		go feed(ch, c.Handle())
	}
	return c
}

// feed is FromChan's goroutine.
func feed[T any](ch <-chan T, h *Handle[T]) {
	for v := range ch {
		if h.Send(v) != nil {
			return // closed by its user: v is dropped
		}
	}
	_ = h.Close() // ErrClosed if its user closed it first
}
