package bench

// The producer-consumer benchmarks of the papers behind chans, on every
// implementation:
//   - seeds 000 and 001: P producers / P consumers with geometric local work
//     of ~100 ns between operations, goroutines = GOMAXPROCS (g=P, one
//     producer and one consumer per P) or fixed at 1000; caps 0, 64, 1024 and
//     unbounded (native: a buffer as large as the run, as seed 002 does);
//   - seed 001: P producers and one consumer, the actor pattern;
//   - seed 002: one goroutine per P in all (at least one producer and one
//     consumer) and 5000 goroutines regardless of GOMAXPROCS;
//   - the physical floor: GOMAXPROCS goroutines doing only atomic adds on one
//     shared counter, against which every result can be read as a fraction
//     of what one fetch-and-add per operation allows.

import "testing"

var seedCaps = []int{0, 64, 1024, unbounded}

// BenchmarkMPMC: P producers / P consumers, or 500 / 500.
func BenchmarkMPMC(b *testing.B) {
	for _, c := range seedCaps {
		for _, w := range []int{0, 100} {
			for _, g := range []int{gP, 1000} {
				runImpls(b, "", sub("/cap=%s/work=%d/g=%s", capName(c), w, gName(g)), impls, func(b *testing.B, im Impl) {
					mpmc(b, im, c, g, w)
				})
			}
		}
	}
}

// BenchmarkMPSC: P producers, one consumer.
func BenchmarkMPSC(b *testing.B) {
	for _, c := range seedCaps {
		for _, w := range []int{0, 100} {
			runImpls(b, "", sub("/cap=%s/work=%d", capName(c), w), impls, func(b *testing.B, im Impl) {
				prodCons(b, im, c, procs(), 1, w)
			})
		}
	}
}

// BenchmarkSeed002: seed 002's enqueue/dequeue runs, no local work: g=P is
// GOMAXPROCS goroutines in all (half producers, half consumers, at least one
// of each), g=5000 is 2500 / 2500.
func BenchmarkSeed002(b *testing.B) {
	for _, c := range []int{0, 1024, unbounded} {
		for _, g := range []int{gP, 5000} {
			runImpls(b, "", sub("/cap=%s/g=%s", capName(c), gName(g)), impls, func(b *testing.B, im Impl) {
				n := g
				if n == gP {
					n = max(2, procs())
				}
				mpmc(b, im, c, n, 0)
			})
		}
	}
}

// BenchmarkFAA: the fetch-and-add floor, GOMAXPROCS goroutines adding to one
// counter; one op is one add.
func BenchmarkFAA(b *testing.B) {
	b.Run("g=P", func(b *testing.B) {
		b.ReportAllocs()
		faa(b, gP)
	})
}
