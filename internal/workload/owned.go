package workload

// lineBytes is the padding that keeps a goroutine's state off every other
// goroutine's cache lines: 128 bytes covers the adjacent-line prefetcher of
// x86-64 and the line size of arm64 server parts.
const lineBytes = 128

// Owned holds a value alone on its cache lines. A workload's goroutines use
// it for what one of them writes at every message (a counter, what a select
// callback received): such values, set up by one goroutine for worker after
// worker, would otherwise lie side by side on the heap, and each message
// would pay for the line moving between cores, a cost of the harness, not
// of the channel under test. The floor (faa) uses it for its one shared
// counter, so that it measures contention on that word and nothing else.
type Owned[T any] struct {
	_ [lineBytes]byte
	V T
	_ [lineBytes]byte
}
