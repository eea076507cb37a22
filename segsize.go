//go:build !chans_smallseg

package chans

// segShift sets the segment size, 1<<segShift cells. Every operation that
// enters a new segment pays for the walk there and for moving a root (four
// read-modify-writes on lines the other side also touches), and every
// segSize messages pay for one allocation; larger segments spread that over
// more messages, smaller ones keep a new channel and a segment whose cells
// were all cancelled small. Measured on 2 cores against 32 cells (ten
// interleaved runs of the performance bar): 64 cells made the buffered and
// unbounded rows 2% to 7% faster at GOMAXPROCS 1 (the pair 5%), with no row
// slower, and batches 18% faster at GOMAXPROCS 2 in a shorter run; 128
// cells made 2+2 goroutines on a 64-slot channel 15% slower at GOMAXPROCS 2.
// A segment of int cells is 1 KiB plus its header. Tests build with the tag
// chans_smallseg to set it to 1, so that segment boundaries, growth, the
// spare list and segment removal are crossed constantly.
const segShift = 6

// ringListFirst and ringListCap are the sizes, in slots, of an unbounded
// ring's first store and of the largest it links (ring_unbounded.go).
const (
	ringListFirst = 32
	ringListCap   = 1024
)
