package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
)

// benchNames maps workload names to benchmark base names; others are
// camel-cased from their dashes.
var benchNames = map[string]string{
	"mpmc":          "MPMC",
	"mpsc":          "MPSC",
	"spsc-pair":     "SPSCPair",
	"pingpong":      "PingPong",
	"tryrecv-empty": "TryRecvEmpty",
	"trysend-full":  "TrySendFull",
	"faa":           "FAA",
}

func benchBase(name string) string {
	if b, ok := benchNames[name]; ok {
		return b
	}
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func capString(c int) string {
	if c < 0 {
		return "unbounded"
	}
	return fmt.Sprint(c)
}

// benchName returns the benchmark name of s without the "Benchmark" prefix
// and the GOMAXPROCS suffix, as in "MPMC/impl=chans/cap=1024/work=100".
func (sw *sweep) benchName(s series) string {
	parts := []string{benchBase(s.w.Name)}
	if s.impl != "" {
		parts = append(parts, "impl="+s.impl)
	}
	if s.w.UsesCap {
		parts = append(parts, "cap="+capString(s.cap))
	}
	if s.w.UsesWork {
		parts = append(parts, fmt.Sprintf("work=%d", sw.o.work))
	}
	if s.w.UsesGoroutines && sw.o.goroutines > 0 {
		parts = append(parts, fmt.Sprintf("goroutines=%d", sw.o.goroutines))
	}
	return strings.Join(parts, "/")
}

// label names s for people, as in "mpmc impl=chans cap=1024".
func (s series) label() string {
	l := s.w.Name
	if s.impl != "" {
		l += " impl=" + s.impl
	}
	if s.w.UsesCap {
		l += " cap=" + capString(s.cap)
	}
	return l
}

// A stat summarises the samples of one point: the time per operation.
type stat struct {
	ns    *benchmath.Sample // ns per message, one value per run
	nsSum benchmath.Summary // its median and the confidence interval of the median
}

// stat summarises pt, reporting false if it has no samples.
func (sw *sweep) stat(pt point) (stat, bool) {
	ss := sw.samples[pt]
	if len(ss) == 0 {
		return stat{}, false
	}
	ns := make([]float64, len(ss))
	for i, s := range ss {
		ns[i] = s.nsPerMsg()
	}
	st := stat{ns: benchmath.NewSample(ns, &benchmath.DefaultThresholds)}
	st.nsSum = benchmath.AssumeNothing.Summary(st.ns, confidence)
	return st, true
}

// summary describes a finished point in a few words, as in "363 ns/op ±6%
// (6 runs)".
func (sw *sweep) summary(pt point) string {
	st, ok := sw.stat(pt)
	if !ok {
		return "no runs"
	}
	return fmt.Sprintf("%s ns/op ±%s (%s)", nsString(st.nsSum.Center), st.nsSum.PctRangeString(), plural(len(sw.samples[pt]), "run"))
}

// groups returns the series of each workload, in plan order.
func (sw *sweep) groups() [][]series {
	var gs [][]series
	for i, s := range sw.series {
		if i == 0 || s.w.Name != sw.series[i-1].w.Name {
			gs = append(gs, nil)
		}
		gs[len(gs)-1] = append(gs[len(gs)-1], s)
	}
	return gs
}

// floor returns the fetch-and-add series, if the sweep has one.
func (sw *sweep) floor() (series, bool) {
	for _, s := range sw.series {
		if s.w.Name == "faa" {
			return s, true
		}
	}
	return series{}, false
}

// tableWidth is the width, in columns, that the tables and their notes fit
// in: a table wider than this is split into several, each repeating the
// leading columns that name its rows.
const tableWidth = 100

// baseImpl returns the implementation the others are compared with: the
// first run, which is native when native was run (parseImpls sorts it
// first).
func (sw *sweep) baseImpl() string { return sw.o.impls[0] }

// ratioNote states the direction of the ratios, for the header; "" when
// there is nothing to compare.
func (sw *sweep) ratioNote() string {
	if len(sw.o.impls) < 2 {
		return ""
	}
	base, other := sw.baseImpl(), sw.o.impls[1]
	also := ""
	if rest := sw.o.impls[2:]; len(rest) > 0 {
		also = fmt.Sprintf(" (and likewise %s/%s)", strings.Join(rest, "/"+base+", "), base)
	}
	return fmt.Sprintf("ratios: time per operation, %s/%s%s: below 1.00x means %s is faster. "+
		"p: Mann-Whitney U test over n runs of each; ~ marks a difference that is not significant (p > 0.05).",
		other, base, also, other)
}

// writeTables writes one table per workload: a row per GOMAXPROCS and
// capacity with, for each implementation, the median time per operation and
// the half-width of its confidence interval; then each implementation's
// time ratio to the base implementation with the p-value of a Mann-Whitney
// U test (~ where the difference is not significant); and, when the sweep
// has the faa workload, its time per operation at that GOMAXPROCS, for
// scale. Tables wider than tableWidth are split.
func (sw *sweep) writeTables(w io.Writer) {
	floor, haveFloor := sw.floor()
	for gi, group := range sw.groups() {
		if gi > 0 {
			fmt.Fprintln(w)
		}
		wl := group[0].w
		var caps []int
		var impls []string
		for _, s := range group {
			if !slices.Contains(caps, s.cap) {
				caps = append(caps, s.cap)
			}
			if !slices.Contains(impls, s.impl) {
				impls = append(impls, s.impl)
			}
		}
		fmt.Fprint(w, wrap(wl.Name+": "+wl.Doc, tableWidth, "  "))
		var params []string
		if wl.UsesWork {
			params = append(params, fmt.Sprintf("work=%dns", sw.o.work))
		}
		if wl.UsesGoroutines {
			if sw.o.goroutines > 0 {
				params = append(params, fmt.Sprintf("goroutines=%d", sw.o.goroutines))
			} else {
				params = append(params, "goroutines=default")
			}
		}
		if len(params) > 0 {
			fmt.Fprintf(w, "(%s)\n", strings.Join(params, ", "))
		}

		t := &table{}
		t.add("procs", false)
		if wl.UsesCap {
			t.add("cap", false)
		}
		t.keys = len(t.header)
		base := impls[0]
		for _, impl := range impls {
			name := impl
			if name == "" {
				name = wl.Name
			}
			t.add(name+" ns/op", false)
			t.add("CI", true)
		}
		for _, impl := range impls[1:] {
			t.add(impl+"/"+base, false)
		}
		showFloor := haveFloor && wl.Name != floor.w.Name
		if showFloor {
			t.add("faa ns/op", false)
		}

		var notes []string
		crossed := false
		for pi, p := range sw.procs {
			ps := fmt.Sprint(p)
			if sw.cross[pi] {
				ps += "*"
				crossed = true
			}
			fst, haveFst := sw.stat(point{floor, p})
			for _, c := range caps {
				row := []string{ps}
				if wl.UsesCap {
					row = append(row, capString(c))
				}
				stats := make([]stat, len(impls))
				have := make([]bool, len(impls))
				anyErr := false
				for i, impl := range impls {
					pt := point{series{w: wl, impl: impl, cap: c}, p}
					stats[i], have[i] = sw.stat(pt)
					anyErr = anyErr || sw.errs[pt] != nil
					if !have[i] {
						row = append(row, "-", "")
						if err := sw.errs[pt]; err != nil && sw.skipped[pt.s] == nil {
							notes = append(notes, fmt.Sprintf("GOMAXPROCS=%d %s: %v", p, pt.s.label(), err))
						}
						continue
					}
					row = append(row, nsString(stats[i].nsSum.Center), "±"+stats[i].nsSum.PctRangeString())
				}
				for i := 1; i < len(impls); i++ {
					if !have[0] || !have[i] {
						row = append(row, "-")
						continue
					}
					row = append(row, ratioString(stats[i], stats[0]))
				}
				if showFloor {
					if haveFst {
						row = append(row, nsString(fst.nsSum.Center))
					} else {
						row = append(row, "-")
					}
				}
				if slices.Contains(have, true) || anyErr {
					t.rows = append(t.rows, row)
				} // else an interrupted sweep never got here
			}
		}
		t.write(w, tableWidth)
		if crossed {
			fmt.Fprintln(w, "* first GOMAXPROCS whose CPUs span another NUMA domain")
		}
		for _, s := range group {
			if err := sw.skipped[s]; err != nil {
				notes = append(notes, fmt.Sprintf("%s: %v", s.label(), err))
			}
		}
		for _, n := range slices.Compact(notes) {
			fmt.Fprint(w, wrap("note: "+n, tableWidth, "  "))
		}
	}
}

// missing describes the points of an interrupted sweep that have fewer runs
// than planned (failed points are reported as notes instead), one line per
// GOMAXPROCS, in plan order, as in "GOMAXPROCS=1: mpmc impl=chans cap=0 (1
// of 6 runs), faa". A workload none of whose series ran at a GOMAXPROCS is
// named alone, and "all workloads" stands for every one of them.
func (sw *sweep) missing() []string {
	var lines []string
	groups := sw.groups()
	for _, p := range sw.procs {
		var items []string
		whole := 0
		for _, group := range groups {
			var short []string
			none := true
			for _, s := range group {
				pt := point{s, p}
				n := len(sw.samples[pt])
				if n > 0 || sw.errs[pt] != nil {
					none = false
				}
				if n < sw.o.count && sw.errs[pt] == nil {
					short = append(short, fmt.Sprintf("%s (%d of %s)", s.label(), n, plural(sw.o.count, "run")))
				}
			}
			if none {
				whole++
				items = append(items, group[0].w.Name)
			} else {
				items = append(items, short...)
			}
		}
		switch {
		case whole == len(groups):
			lines = append(lines, fmt.Sprintf("GOMAXPROCS=%d: all workloads", p))
		case len(items) > 0:
			lines = append(lines, fmt.Sprintf("GOMAXPROCS=%d: %s", p, strings.Join(items, ", ")))
		}
	}
	return lines
}

// interruptedNote says that the sweep was cut short and what it lacks, for
// the top of the tables.
func (sw *sweep) interruptedNote() string {
	var b strings.Builder
	b.WriteString("INTERRUPTED: this run was stopped before the end; these points are missing:\n")
	for _, l := range sw.missing() {
		b.WriteString(wrap("  "+l, tableWidth, "    "))
	}
	return b.String()
}

// ratioString formats the ratio of a's median time per operation to b's, as
// in "0.82x (p=0.002 n=6)", with a leading "~" where the difference is not
// significant at benchmath's default alpha.
func ratioString(a, b stat) string {
	cmp := benchmath.AssumeNothing.Compare(a.ns, b.ns)
	r := fmt.Sprintf("%.2fx (%s)", a.nsSum.Center/b.nsSum.Center, cmp)
	if cmp.P > cmp.Alpha {
		r = "~" + r
	}
	return r
}

// nsString formats nanoseconds with at least three significant digits.
func nsString(ns float64) string {
	switch {
	case ns >= 100:
		return fmt.Sprintf("%.0f", ns)
	case ns >= 10:
		return fmt.Sprintf("%.1f", ns)
	}
	return fmt.Sprintf("%.2f", ns)
}
