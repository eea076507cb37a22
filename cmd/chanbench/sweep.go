package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/scalable-go/chans/internal/topology"
	"github.com/scalable-go/chans/internal/workload"
)

// A series is one line of a plot: a workload with one implementation and
// capacity, measured at every GOMAXPROCS of the sweep. impl is "" and cap 0
// for workloads that use neither.
type series struct {
	w    workload.Info
	impl string
	cap  int
}

// A point is one series at one GOMAXPROCS.
type point struct {
	s     series
	procs int
}

// A sample is the outcome of one run.
type sample struct {
	messages int
	elapsed  time.Duration
	bytes    float64 // allocated bytes per message
	allocs   float64 // allocations per message
}

func (s sample) nsPerMsg() float64 { return float64(s.elapsed.Nanoseconds()) / float64(s.messages) }

// runFunc runs one workload; workload.Run in production, a fake in tests.
type runFunc func(workload.Config) (workload.Result, error)

// sweep holds the plan of a run and everything measured so far. Points are
// measured in plan order; samples and errs only ever grow, so that an
// interrupted sweep can report what it has.
type sweep struct {
	o           *options
	topo        topology.Topology
	procs       []int  // ascending
	cross       []bool // cross[i]: procs[i] is the first point spanning a new domain
	series      []series
	samples     map[point][]sample
	errs        map[point]error // a series that failed at a point is not run there again
	skipped     map[series]error
	interrupted bool // the sweep was stopped before the end of its plan
}

func newSweep(o *options, topo topology.Topology) *sweep {
	sw := &sweep{
		o:       o,
		topo:    topo,
		procs:   o.procs,
		samples: make(map[point][]sample),
		errs:    make(map[point]error),
		skipped: make(map[series]error),
	}
	if sw.procs == nil {
		sw.procs = topo.DefaultProcs()
	}
	sw.cross = topo.Crossings(sw.procs)
	for _, w := range o.workloads {
		for _, c := range o.capsFor(w) {
			for _, impl := range o.implsFor(w) {
				s := series{w: w, cap: c}
				if !implFree[w.Name] {
					s.impl = impl
				}
				sw.series = append(sw.series, s)
			}
		}
	}
	return sw
}

// config returns the workload configuration of s at its current GOMAXPROCS.
func (sw *sweep) config(s series, messages int) workload.Config {
	impl := s.impl
	if impl == "" {
		impl = workload.Native
	}
	return workload.Config{
		Workload:   s.w.Name,
		Impl:       impl,
		Cap:        s.cap,
		Goroutines: sw.o.goroutines,
		Work:       sw.o.work,
		Messages:   messages,
	}
}

// totalRuns is the number of timed runs in the plan.
func (sw *sweep) totalRuns() int { return sw.totalPoints() * sw.o.count }

// totalPoints is the number of points in the plan.
func (sw *sweep) totalPoints() int { return len(sw.procs) * len(sw.series) }

// oversubscribed returns the GOMAXPROCS of the sweep that exceed the
// topology's CPUs.
func (sw *sweep) oversubscribed() []int {
	var over []int
	for _, p := range sw.procs {
		if p > sw.topo.NumCPU() {
			over = append(over, p)
		}
	}
	return over
}

// errInterrupted reports a sweep stopped by its context.
var errInterrupted = errors.New("interrupted")

// run measures the plan. For each GOMAXPROCS (and, with -pin, its CPUs), and
// each workload, it calibrates every series of the workload and then runs
// the repetitions round-robin over those series, so that drift during the
// sweep hits chans and native alike. A series whose run fails is dropped at
// that point and the sweep goes on; run returns the first failure other than
// workload.ErrSelectUnavailable, or errInterrupted (and sets
// sw.interrupted) if ctx was cancelled. It reports each run and each
// finished point to prog. It leaves GOMAXPROCS and the affinity as it found
// them.
func (sw *sweep) run(ctx context.Context, run runFunc, prog *progress) (err error) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if sw.o.pin {
		old, aerr := topology.Allowed()
		if aerr != nil {
			return fmt.Errorf("-pin: %v", aerr)
		}
		defer func() {
			if perr := topology.Pin(old); perr != nil && err == nil {
				err = fmt.Errorf("restoring CPU affinity: %v", perr)
			}
		}()
	}
	prog.start(sw.totalRuns(), sw.totalPoints())
	defer prog.finish()

	var first error
	fail := func(pt point, e error, runsLeft int) {
		sw.errs[pt] = e
		if errors.Is(e, workload.ErrSelectUnavailable) {
			sw.skipped[pt.s] = e
		} else if first == nil {
			first = e
		}
		prog.skip(runsLeft)
		prog.pointDone(pt, "failed: "+e.Error())
	}
	for _, p := range sw.procs {
		runtime.GOMAXPROCS(p)
		if sw.o.pin {
			if err := topology.Pin(sw.topo.CPUs(p)); err != nil {
				return fmt.Errorf("-pin: %v", err)
			}
		}
		for _, group := range sw.groups() {
			msgs := make([]int, len(group))
			for i, s := range group {
				if ctx.Err() != nil {
					sw.interrupted = true
					return errInterrupted
				}
				pt := point{s, p}
				if err, ok := sw.skipped[s]; ok {
					sw.errs[pt] = err
					prog.skip(sw.o.count)
					prog.pointDone(pt, "skipped: "+err.Error())
					continue
				}
				prog.show(pt, 0, "calibrating")
				n, err := sw.messages(sw.config(s, 0), run)
				if err != nil {
					fail(pt, err, sw.o.count)
					continue
				}
				msgs[i] = n
			}
			for rep := range sw.o.count {
				for i, s := range group {
					pt := point{s, p}
					if sw.errs[pt] != nil {
						continue
					}
					if ctx.Err() != nil {
						sw.interrupted = true
						return errInterrupted
					}
					prog.show(pt, rep+1, "")
					smp, err := measure(sw.config(s, msgs[i]), run)
					if err != nil {
						fail(pt, err, sw.o.count-rep)
						continue
					}
					sw.samples[pt] = append(sw.samples[pt], smp)
					prog.ran(smp)
					if rep == sw.o.count-1 {
						prog.pointDone(pt, sw.summary(pt))
					}
				}
			}
		}
	}
	return first
}

// measure does one run and the allocation counts around it.
func measure(cfg workload.Config, run runFunc) (sample, error) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	r, err := run(cfg)
	runtime.ReadMemStats(&m1)
	if err != nil {
		return sample{}, err
	}
	if r.Messages <= 0 {
		return sample{}, fmt.Errorf("workload %s/%s: no messages moved", cfg.Workload, cfg.Impl)
	}
	el := max(r.Elapsed, time.Nanosecond) // a zero clock reading would give infinite throughput
	n := float64(r.Messages)
	return sample{
		messages: r.Messages,
		elapsed:  el,
		bytes:    float64(m1.TotalAlloc-m0.TotalAlloc) / n,
		allocs:   float64(m1.Mallocs-m0.Mallocs) / n,
	}, nil
}

// Calibration bounds. The first run is small so that a slow workload does
// not overshoot; later runs grow by at most calibrateGrowth. maxMessages
// caps a run (a native "unbounded" channel buffers the whole run, 8 bytes a
// message).
const (
	calibrateFirst  = 1000
	calibrateGrowth = 100
	maxMessages     = 1 << 30
)

// messages returns the message count for each run of cfg's point: -n if
// given, else a count calibrated so that a run takes about -d. It runs cfg
// with growing counts until one run takes a tenth of -d, which also warms
// the point up, and extrapolates from that run.
func (sw *sweep) messages(cfg workload.Config, run runFunc) (int, error) {
	if sw.o.n > 0 {
		return sw.o.n, nil
	}
	d := sw.o.d
	n := calibrateFirst
	for {
		cfg.Messages = n
		r, err := run(cfg)
		if err != nil {
			return 0, err
		}
		el := max(r.Elapsed, time.Nanosecond)
		if el >= d/10 || n >= maxMessages {
			return calibrated(n, el, d), nil
		}
		// Aim past a tenth of d, so that the next run is likely the last.
		next := float64(n) * float64(d/8) / float64(el)
		n = int(min(max(next, 2*float64(n)), calibrateGrowth*float64(n), maxMessages))
	}
}

// calibrated scales n messages that took el to a count for d, rounded down
// to two significant digits, and at least 1.
func calibrated(n int, el, d time.Duration) int {
	x := float64(n) * float64(d) / float64(el)
	x = min(x, maxMessages)
	if x < 1 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x))-1)
	if p < 1 {
		p = 1
	}
	return int(math.Floor(x/p) * p)
}
