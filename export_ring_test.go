package chans

// SetLenGaveUp makes every Len that gives up retrying call f (see
// lenGaveUp). Set it before any channel is used.
func SetLenGaveUp(f func()) { lenGaveUp = f }

// UsesRing reports whether c's buffer is a ring (see ring.go), for the
// tests of the chans_test package.
func UsesRing[T any](c *Chan[T]) bool { return c.rb != nil }
