package ring

// ParkedSenders returns the number of senders parked, or about to park
// after a last look at the ring.
func (c *Chan[T]) ParkedSenders() int { return int(c.sendq.n.Load()) }
