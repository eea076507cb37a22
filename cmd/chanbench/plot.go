package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scalable-go/chans/internal/svgplot"
	"github.com/scalable-go/chans/internal/workload"
)

// implColors gives each implementation a color (Okabe-Ito, which stays
// distinct for color-blind readers).
var implColors = map[string]string{
	workload.Native:      "#0072B2", // blue
	workload.Chans:       "#D55E00", // vermillion
	workload.ChansHandle: "#009E73", // green
	"":                   "#555555", // workloads without an implementation
}

// capStyles gives the i-th capacity of a workload a dash pattern and marker.
var capStyles = []struct {
	dash   string
	marker svgplot.Marker
}{
	{"", svgplot.Circle},
	{"7 4", svgplot.Square},
	{"2 3", svgplot.Triangle},
	{"10 3 2 3", svgplot.Diamond},
}

// writePlot draws the sweep: a panel per workload with the time per
// operation against GOMAXPROCS, a line per implementation and capacity with
// error bars for the confidence interval of the median, and a dashed line
// where the sweep first crosses into another NUMA domain. The plot of an
// interrupted sweep says so, and lists the missing points.
func (sw *sweep) writePlot(w io.Writer, e env) error {
	fig := svgplot.Figure{
		Title: "chanbench: time per operation against GOMAXPROCS (median, 95% CI; lower is faster)",
		Notes: []string{
			fmt.Sprintf("%s · %s · %s/%s · commit %s", e.cpu, e.machine, e.goos, e.goarch, shortCommit(e.commit)),
			commandLine(sw.o.args),
		},
	}
	if sw.interrupted {
		fig.Title = "INTERRUPTED, partial results: " + fig.Title
		fig.Notes = append(fig.Notes, "interrupted: this run was stopped before the end; missing points:")
		for _, l := range sw.missing() {
			fig.Notes = append(fig.Notes, "  "+l)
		}
	}
	var xticks []float64
	for _, p := range sw.procs {
		xticks = append(xticks, float64(p))
	}
	var vlines []svgplot.VLine
	for i, p := range sw.procs {
		if sw.cross[i] {
			vlines = append(vlines, svgplot.VLine{X: float64(p), Label: fmt.Sprintf("%d NUMA domains", sw.topo.Domains(p))})
		}
	}
	for _, group := range sw.groups() {
		wl := group[0].w
		panel := svgplot.Panel{
			Title:  wl.Name,
			XLabel: "GOMAXPROCS",
			YLabel: "ns/op (lower is faster)",
			XTicks: xticks,
			LogX:   true,
			VLines: vlines,
		}
		if wl.UsesWork {
			panel.Subtitle = fmt.Sprintf("work=%dns", sw.o.work)
		}
		if wl.Name == "faa" {
			panel.Subtitle = "not a channel: one atomic add on one shared counter, for scale"
		}
		if sw.interrupted {
			panel.NoData = "no data: the run was interrupted before this workload"
		}
		var caps []int
		for _, s := range group {
			if !slices.Contains(caps, s.cap) {
				caps = append(caps, s.cap)
			}
		}
		for _, s := range group {
			st := capStyles[slices.Index(caps, s.cap)%len(capStyles)]
			label := s.impl
			if label == "" {
				label = wl.Name
			}
			if wl.UsesCap {
				label += " cap=" + capString(s.cap)
			}
			ps := svgplot.Series{Label: label, Color: implColors[s.impl], Dash: st.dash, Marker: st.marker}
			if ps.Color == "" {
				ps.Color = "#CC79A7"
			}
			for _, p := range sw.procs {
				if stat, ok := sw.stat(point{s, p}); ok {
					ps.Points = append(ps.Points, svgplot.Point{
						X: float64(p), Y: stat.nsSum.Center, Lo: stat.nsSum.Lo, Hi: stat.nsSum.Hi,
					})
				}
			}
			panel.Series = append(panel.Series, ps)
		}
		fig.Panels = append(fig.Panels, panel)
	}
	return fig.Write(w)
}

// shortCommit abbreviates a revision to 12 hex digits, keeping "-dirty".
func shortCommit(c string) string {
	rev, dirty := strings.CutSuffix(c, "-dirty")
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
