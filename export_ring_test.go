package chans

// UsesRing reports whether c's buffer is a ring (see ring.go), for the
// tests of the chans_test package.
func UsesRing[T any](c *Chan[T]) bool { return c.rb != nil }
