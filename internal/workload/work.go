package workload

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// Work simulates local computation between channel operations: each call to
// Do spins for a random number of units, geometrically distributed with the
// mean given to NewWork, one unit being about a nanosecond of busy loop on the
// machine at hand (calibrated once per process). A mean of 100 stands for a
// short computation between channel operations.
//
// A Work belongs to one goroutine: it holds its own PCG generator, on cache
// lines of its own (see Owned), so Do writes no memory that another
// goroutine uses and allocates nothing. The zero value does no work.
type Work struct {
	_     [lineBytes]byte
	pcg   rand.PCG
	mean  int
	scale float64 // Spin iterations per unit of the table: mean × loops per unit
	_     [lineBytes]byte
}

// geoTable holds geoSize quantiles of the exponential distribution with mean
// 1, at the midpoints of geoSize equal-probability bins, rescaled so that their
// average is exactly 1. Do draws one uniformly and scales it by the mean: a
// discretised geometric distribution (the floor of an exponential) that costs a
// table load instead of a logarithm per operation.
const geoSize = 1024

var geoTable = func() (t [geoSize]float64) {
	sum := 0.0
	for i := range t {
		u := (float64(i) + 0.5) / geoSize
		t[i] = -math.Log(1 - u)
		sum += t[i]
	}
	for i := range t {
		t[i] *= geoSize / sum
	}
	return t
}()

// NewWork returns a Work with the given mean in units (0 or less: no work),
// seeded from seed so that goroutines given different seeds draw independent
// sequences.
func NewWork(mean int, seed uint64) Work {
	w := Work{mean: max(mean, 0)}
	if w.mean > 0 {
		w.scale = float64(w.mean) * loopsPerUnit()
	}
	w.pcg.Seed(seed, seed^0x9e3779b97f4a7c15)
	return w
}

// Mean returns the mean number of units per Do.
func (w *Work) Mean() int { return w.mean }

// Do spins for one geometrically distributed amount of work. It returns a
// value derived from the loop so that callers can keep the compiler honest;
// most ignore it.
func (w *Work) Do() uint64 {
	if w.mean <= 0 {
		return 0
	}
	x := w.pcg.Uint64()
	n := int(geoTable[x%geoSize] * w.scale)
	return Spin(n)
}

// Spin runs n iterations of a dependent multiply-add chain and returns its
// result. One iteration costs a few cycles; Calibrate says how many make a
// nanosecond.
//
//go:noinline
func Spin(n int) uint64 {
	x := uint64(n) | 1
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

var (
	calibrateOnce sync.Once
	perUnit       float64 // Spin iterations per nanosecond
)

// loopsPerUnit returns how many Spin iterations take about one nanosecond,
// measured once per process as the best of several short runs (about 2 ms in
// all), so that a unit means the same time on every machine.
func loopsPerUnit() float64 {
	calibrateOnce.Do(func() {
		const n = 200_000
		best := time.Duration(math.MaxInt64)
		var x uint64 // kept alive below, so that the loops are not optimised away
		for range 10 {
			t := time.Now()
			x += Spin(n)
			if d := time.Since(t); d > 0 && d < best {
				best = d
			}
		}
		runtime.KeepAlive(x)
		perUnit = float64(n) / float64(best.Nanoseconds())
	})
	return perUnit
}

// Calibrate runs the one-time calibration now, so that it does not land inside
// a timed region, and returns the Spin iterations per unit (nanosecond).
func Calibrate() float64 { return loopsPerUnit() }
