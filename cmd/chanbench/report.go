package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

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

// A stat summarises the samples of one point.
type stat struct {
	thr    *benchmath.Sample // messages per second
	thrSum benchmath.Summary
	nsSum  benchmath.Summary
}

// stat summarises pt, reporting false if it has no samples.
func (sw *sweep) stat(pt point) (stat, bool) {
	ss := sw.samples[pt]
	if len(ss) == 0 {
		return stat{}, false
	}
	thr := make([]float64, len(ss))
	ns := make([]float64, len(ss))
	for i, s := range ss {
		thr[i], ns[i] = s.msgsPerSec(), s.nsPerMsg()
	}
	st := stat{thr: benchmath.NewSample(thr, &benchmath.DefaultThresholds)}
	st.thrSum = benchmath.AssumeNothing.Summary(st.thr, confidence)
	st.nsSum = benchmath.AssumeNothing.Summary(benchmath.NewSample(ns, &benchmath.DefaultThresholds), confidence)
	return st, true
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

// writeTables writes one table per workload: a row per GOMAXPROCS and
// capacity, and for each implementation the median throughput with the
// half-width of its confidence interval and the median ns per message;
// then each implementation's ratio to native with the p-value of a
// Mann-Whitney U test (~ where the difference is not significant), and its
// share of the fetch-and-add floor at that GOMAXPROCS.
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
		fmt.Fprintf(w, "%s: %s\n", wl.Name, wl.Doc)
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

		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		hdr := []string{"procs"}
		if wl.UsesCap {
			hdr = append(hdr, "cap")
		}
		base := impls[0] // native when it was run: parseImpls sorts it first
		for _, impl := range impls {
			name := impl
			if name == "" {
				name = wl.Name
			}
			hdr = append(hdr, name+" msgs/s", "CI", "ns/msg")
		}
		for _, impl := range impls[1:] {
			hdr = append(hdr, impl+"/"+base)
		}
		showFloor := haveFloor && wl.Name != floor.w.Name
		if showFloor {
			for _, impl := range impls {
				hdr = append(hdr, impl+"/faa")
			}
		}
		fmt.Fprintln(tw, strings.Join(hdr, "\t"))

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
						row = append(row, "-", "", "")
						if err := sw.errs[pt]; err != nil && sw.skipped[pt.s] == nil {
							notes = append(notes, fmt.Sprintf("GOMAXPROCS=%d %s: %v", p, pt.s.label(), err))
						}
						continue
					}
					row = append(row, si(stats[i].thrSum.Center), "±"+stats[i].thrSum.PctRangeString(), nsString(stats[i].nsSum.Center))
				}
				for i := 1; i < len(impls); i++ {
					if !have[0] || !have[i] {
						row = append(row, "-")
						continue
					}
					row = append(row, ratioString(stats[i], stats[0]))
				}
				if showFloor {
					for i := range impls {
						if !have[i] || !haveFst {
							row = append(row, "-")
							continue
						}
						row = append(row, fmt.Sprintf("%.1f%%", 100*stats[i].thrSum.Center/fst.thrSum.Center))
					}
				}
				if slices.Contains(have, true) || anyErr {
					fmt.Fprintln(tw, strings.Join(row, "\t"))
				} // else an interrupted sweep never got here
			}
		}
		tw.Flush()
		if crossed {
			fmt.Fprintln(w, "* first GOMAXPROCS whose CPUs span another NUMA domain")
		}
		for _, s := range group {
			if err := sw.skipped[s]; err != nil {
				notes = append(notes, fmt.Sprintf("%s: %v", s.label(), err))
			}
		}
		for _, n := range slices.Compact(notes) {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
}

// ratioString formats the ratio of a's median throughput to b's, as in
// "1.22× (p=0.002 n=6)", with a leading "~" where the difference is not
// significant at benchmath's default alpha.
func ratioString(a, b stat) string {
	cmp := benchmath.AssumeNothing.Compare(a.thr, b.thr)
	r := fmt.Sprintf("%.2f× (%s)", a.thrSum.Center/b.thrSum.Center, cmp)
	if cmp.P > cmp.Alpha {
		r = "~" + r
	}
	return r
}

// si formats x with three significant digits and an SI suffix, as in
// "12.3M".
func si(x float64) string {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return fmt.Sprint(x)
	}
	suffix := []string{"", "k", "M", "G", "T", "P"}
	i := 0
	for math.Abs(x) >= 999.5 && i < len(suffix)-1 {
		x /= 1000
		i++
	}
	switch {
	case math.Abs(x) >= 99.95:
		return fmt.Sprintf("%.0f%s", x, suffix[i])
	case math.Abs(x) >= 9.995:
		return fmt.Sprintf("%.1f%s", x, suffix[i])
	}
	return fmt.Sprintf("%.2f%s", x, suffix[i])
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
