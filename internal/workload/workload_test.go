package workload

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"
)

// TestRunAll runs every workload on every implementation, capacity and a few
// goroutine counts with tiny message counts, and checks that every message
// arrived (Run itself checks the values; this checks the count it reports).
func TestRunAll(t *testing.T) {
	msgs := 2000
	if testing.Short() {
		msgs = 300
	}
	before := runtime.NumGoroutine()
	for _, w := range Workloads() {
		caps := []int{0}
		if w.UsesCap {
			caps = []int{0, 1, 64, -1}
		}
		gs := []int{0}
		if w.UsesGoroutines {
			gs = []int{0, 3, 64}
		}
		works := []int{0}
		if w.UsesWork {
			works = []int{0, 100}
		}
		for _, impl := range Impls() {
			for _, c := range caps {
				for _, g := range gs {
					for _, wk := range works {
						cfg := Config{Workload: w.Name, Impl: impl, Cap: c, Goroutines: g, Work: wk, Messages: msgs}
						name := fmt.Sprintf("%s/impl=%s/cap=%d/g=%d/work=%d", w.Name, impl, c, g, wk)
						t.Run(name, func(t *testing.T) {
							r, err := Run(cfg)
							switch {
							case errors.Is(err, ErrSelectUnavailable):
								t.Skip(err)
							case err != nil && rejects(cfg):
								return // a configuration the workload cannot run
							case err != nil:
								t.Fatal(err)
							}
							if r.Messages != cfg.Messages {
								t.Errorf("Messages = %d, want %d", r.Messages, cfg.Messages)
							}
							if r.Elapsed <= 0 {
								t.Errorf("Elapsed = %v, want > 0", r.Elapsed)
							}
						})
					}
				}
			}
		}
	}
	// Every run waits for its goroutines; give exiting ones a moment.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left running, had %d before", n, before)
	}
}

// rejects reports whether Run must refuse cfg.
func rejects(cfg Config) bool {
	switch cfg.Workload {
	case "spsc-pair":
		return cfg.Cap == 0
	case "trysend-full":
		return cfg.Cap < 0
	}
	return false
}

func TestRunRejects(t *testing.T) {
	for _, cfg := range []Config{
		{Workload: "nope", Impl: Native, Messages: 1},
		{Workload: "mpmc", Impl: "nope", Messages: 1},
		{Workload: "mpmc", Impl: Chans, Cap: -2, Messages: 1},
		{Workload: "mpmc", Impl: Chans, Messages: -1},
		{Workload: "spsc-pair", Impl: Native, Cap: 0, Messages: 1},
		{Workload: "trysend-full", Impl: ChansHandle, Cap: -1, Messages: 1},
	} {
		if _, err := Run(cfg); err == nil {
			t.Errorf("Run(%+v) succeeded, want an error", cfg)
		}
	}
}

func TestZeroMessages(t *testing.T) {
	for _, w := range Workloads() {
		for _, impl := range Impls() {
			cfg := Config{Workload: w.Name, Impl: impl, Cap: 64}
			if r, err := Run(cfg); err != nil && !errors.Is(err, ErrSelectUnavailable) {
				t.Errorf("%s/%s: %v", w.Name, impl, err)
			} else if r.Messages != 0 {
				t.Errorf("%s/%s: Messages = %d, want 0", w.Name, impl, r.Messages)
			}
		}
	}
}

func TestGeoTableMean(t *testing.T) {
	sum := 0.0
	for _, x := range geoTable {
		sum += x
	}
	if m := sum / geoSize; math.Abs(m-1) > 1e-9 {
		t.Errorf("table mean = %v, want 1", m)
	}
	// A geometric distribution with mean 1 has P(X >= 1) = 1/2; the table's
	// quantiles must say the same.
	if geoTable[geoSize/2-1] >= 1 || geoTable[geoSize/2] < 0.69 {
		t.Errorf("median quantiles %v, %v; want about ln 2", geoTable[geoSize/2-1], geoTable[geoSize/2])
	}
}

func TestWorkTakesAboutItsMean(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test")
	}
	const mean, n = 1000, 2000
	w := NewWork(mean, 1)
	best := time.Duration(math.MaxInt64)
	for range 5 {
		start := time.Now()
		for range n {
			w.Do()
		}
		best = min(best, time.Since(start))
	}
	per := float64(best.Nanoseconds()) / n
	if per < mean/3 || per > mean*3 {
		t.Errorf("Work(%d).Do took %.0f ns on average, want about %d", mean, per, mean)
	}
}

func TestWorkDoesNotAllocate(t *testing.T) {
	w := NewWork(10, 1)
	if a := testing.AllocsPerRun(100, func() { w.Do() }); a != 0 {
		t.Errorf("Work.Do allocates %v times per call", a)
	}
}
