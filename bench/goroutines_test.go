package bench

import "testing"

// BenchmarkGoroutines is the bar's mpmc row without local work, with the
// number of goroutines swept from 2 to 2000 (half producers, half
// consumers), on a rendezvous channel and on one of one slot, where nearly
// every message meets a goroutine that waits. It shows how the cost of a
// message changes with the number of goroutines waiting their turn, which
// the bar samples only at 2·GOMAXPROCS and 1000:
//
//	go test ./bench -run '^$' -bench '^BenchmarkGoroutines$' -benchtime 200ms -count 10 -cpu 1 -timeout 0
func BenchmarkGoroutines(b *testing.B) {
	for _, c := range []int{0, 1} {
		for _, g := range []int{2, 8, 32, 128, 512, 1000, 2000} {
			runImpls(b, "", sub("/cap=%s/g=%d", capName(c), g), chanImpls, func(b *testing.B, im Impl) {
				mpmc(b, im, c, g, 0)
			})
		}
	}
}
