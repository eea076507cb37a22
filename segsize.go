//go:build !chans_smallseg

package chans

// segShift sets the segment size, 1<<segShift cells. Every operation that
// enters a new segment pays for the walk there and for moving a root (four
// read-modify-writes on lines the other side also touches), and every
// segSize messages pay for one allocation; larger segments spread that over
// more messages, smaller ones keep a new channel and a segment whose cells
// were all cancelled small. A segment of int cells is 4 KiB plus its header
// (4864 bytes with the allocator's rounding); a new channel on cells
// allocates one: making a rendezvous Chan[int] and sending on it once
// allocates 5504 bytes and took about 2.6 µs on 2 cores, against 1792
// bytes and 1.25 µs with 64-cell segments (the collector's work included).
//
// Measured on 2 cores, in interleaved runs of the performance bar: 64
// cells against 32 made the buffered and unbounded rows 2% to 7% faster at
// GOMAXPROCS 1, with no row slower. 128 cells then made 2+2 goroutines on
// a 64-slot channel 15% slower at GOMAXPROCS 2, likely because cells that
// shared a line were 32 indexes apart, so that a producer and a consumer
// 64 apart wrote the same lines: since spreadIndex lays a segment out as
// blocks of 64 cells, 128 cells made that row 8% faster instead. With the
// blocks, 256 cells against 64 made producers and consumers at GOMAXPROCS
// 2 5% to 15% faster per message (most consistently the rows with work
// between operations and those with 1000 goroutines) and batches up to 18%
// faster; the one row that was slower in some runs is two producers and
// two consumers without work on a 1024-slot channel, while the two cores'
// caches are far apart.
const segShift = 8

// ringListFirst and ringListCap are the sizes, in slots, of an unbounded
// ring's first store and of the largest it links (ring_unbounded.go).
const (
	ringListFirst = 32
	ringListCap   = 1024
)
