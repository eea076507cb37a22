//go:build chans_smallseg

package chans

// segShift is 1 in chans_smallseg builds: segments of two cells.
const segShift = 1

// Unbounded rings of small stores: two slots first, eight at most.
const (
	ringListFirst = 2
	ringListCap   = 8
)
