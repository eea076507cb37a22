package bench

import "testing"

// barSelect, when set (by select_test.go, once chans has select), adds the
// select row to BenchmarkBar.
var barSelect func(b *testing.B)

// barIdle, when set (by idle_test.go, on Unix), adds the idle row.
var barIdle func(b *testing.B)

// BenchmarkBar holds every row of the performance bar, native and chans
// side by side, so that one run gives the whole table:
//
//	go test ./bench -run '^$' -bench '^BenchmarkBar$' -count 10 -cpu 1,2 -timeout 0 > bar.txt
//	go run golang.org/x/perf/cmd/benchstat -col /impl bar.txt
//
// One op is one message (mpmc, pingpong hops), one send+receive pair, or one
// failed non-blocking operation. Rows:
//   - mpmc: P producers / P consumers (g=P) or 500 / 500 (g=1000), cap 64,
//     1024, unbounded (against a native buffer of the whole run), 0
//     (rendezvous) and 1 (where nearly every message meets a parked
//     goroutine), with no local work and with ~100 ns of geometric local
//     work.
//   - pingpong: rendezvous round trips, one op per one-way hop, with no
//     local work (cap=0) and with ~100 ns of it before each send
//     (cap=0/work=100, as in chanbench's ping-pong).
//   - pair/cap=64: one goroutine, send then receive.
//   - tryrecv-empty, trysend-full: failing TryRecv / TrySend on a channel of
//     capacity 64, from GOMAXPROCS goroutines.
//   - select-quit: consumers select over the work channel and an idle quit
//     channel (when chans has select).
//   - idle: 1000 goroutines blocked on channels that never become ready; one
//     op is a millisecond of wall time, and cpu-ns/op the CPU time the whole
//     process spent in it (Unix only).
func BenchmarkBar(b *testing.B) {
	for _, c := range []int{64, 1024, unbounded, 0, 1} {
		for _, w := range []int{0, 100} {
			for _, g := range []int{gP, 1000} {
				runImpls(b, "mpmc/", sub("/cap=%s/work=%d/g=%s", capName(c), w, gName(g)), chanImpls, func(b *testing.B, im Impl) {
					mpmc(b, im, c, g, w)
				})
			}
		}
	}
	runImpls(b, "pingpong/", "/cap=0", chanImpls, func(b *testing.B, im Impl) {
		pingPong(b, im, 0, 0)
	})
	runImpls(b, "pingpong/", "/cap=0/work=100", chanImpls, func(b *testing.B, im Impl) {
		pingPong(b, im, 0, 100)
	})
	runImpls(b, "pair/", "/cap=64", chanImpls, func(b *testing.B, im Impl) {
		pairs(b, im, 64)
	})
	runImpls(b, "tryrecv-empty/", "/cap=64", chanImpls, func(b *testing.B, im Impl) {
		failRecv(b, im, 64)
	})
	runImpls(b, "trysend-full/", "/cap=64", chanImpls, func(b *testing.B, im Impl) {
		failSend(b, im, 64)
	})
	if barSelect != nil {
		b.Run("select-quit", barSelect)
	}
	if barIdle != nil {
		b.Run("idle", barIdle)
	}
}
