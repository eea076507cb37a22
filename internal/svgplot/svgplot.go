// Package svgplot draws small multiples of line charts as a self-contained
// SVG file, with the standard library only: panels in a grid, each with
// axes, ticks, labels, a legend, error bars and labelled vertical markers.
//
// It is made for benchmark sweeps (throughput against GOMAXPROCS) and knows
// nothing else: the y axis starts at zero, and the x axis is linear or
// base-2 logarithmic.
package svgplot

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// A Point is one measurement. Lo and Hi bound its error bar, which is drawn
// when both are finite.
type Point struct {
	X, Y   float64
	Lo, Hi float64
}

// A Marker is the shape drawn at each point of a series.
type Marker int

const (
	Circle Marker = iota
	Square
	Triangle
	Diamond
)

// A Series is one line. Color is any SVG color; Dash is an SVG
// stroke-dasharray ("" for a solid line).
type Series struct {
	Label  string
	Color  string
	Dash   string
	Marker Marker
	Points []Point
}

// A VLine is a labelled dashed vertical line across a panel's plot area.
type VLine struct {
	X     float64
	Label string
}

// A Panel is one chart. XTicks are where the x axis is labelled (default:
// every distinct x of the points). With LogX the x axis is base-2
// logarithmic, which spaces a 1, 2, 4, ... sweep evenly; it needs x > 0.
// A panel with no point to draw says so across its plot area, in the words
// of NoData (default "no data"), rather than showing empty axes.
type Panel struct {
	Title, Subtitle string
	XLabel, YLabel  string
	XTicks          []float64
	LogX            bool
	Series          []Series
	VLines          []VLine
	NoData          string
}

// A Figure is a title, a few lines of notes, and panels laid out in Columns
// columns (default 2, or 1 for a single panel).
type Figure struct {
	Title   string
	Notes   []string
	Columns int
	Panels  []Panel
}

// Sizes, in SVG user units (pixels).
const (
	panelW    = 600
	panelH    = 340
	padLeft   = 64  // y tick labels and the y label
	padRight  = 200 // the legend
	padTop    = 56  // title, subtitle and the labels of vertical lines
	padBottom = 46  // x tick labels and the x label
	titleH    = 34
	noteH     = 16
	gap       = 12
)

// Write writes f as an SVG document to w.
func (f *Figure) Write(w io.Writer) error {
	cols := f.Columns
	if cols <= 0 {
		cols = min(2, max(1, len(f.Panels)))
	}
	rows := (len(f.Panels) + cols - 1) / cols
	head := titleH + noteH*len(f.Notes) + gap
	width := cols*panelW + (cols+1)*gap
	height := head + rows*(panelH+gap)

	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="%d" y="24" font-size="18" font-weight="bold">%s</text>`+"\n", gap, esc(f.Title))
	for i, n := range f.Notes {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#444">%s</text>`+"\n", gap, titleH+noteH*i+10, esc(n))
	}
	for i := range f.Panels {
		x := gap + (i%cols)*(panelW+gap)
		y := head + (i/cols)*(panelH+gap)
		fmt.Fprintf(b, `<g transform="translate(%d,%d)">`+"\n", x, y)
		f.Panels[i].write(b)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.Flush()
}

// scale maps data to pixels on one axis.
type scale struct {
	lo, hi   float64 // data range, after the log transform if any
	plo, phi float64 // pixel range
	log2     bool
}

func (s scale) at(v float64) float64 {
	if s.log2 {
		v = math.Log2(v)
	}
	return s.plo + (v-s.lo)/(s.hi-s.lo)*(s.phi-s.plo)
}

func (p *Panel) write(b *bufio.Writer) {
	x0, x1 := float64(padLeft), float64(panelW-padRight)
	y0, y1 := float64(panelH-padBottom), float64(padTop) // y grows downwards

	// Panel frame and title.
	fmt.Fprintf(b, `<rect x="0.5" y="0.5" width="%d" height="%d" fill="none" stroke="#ccc"/>`+"\n", panelW-1, panelH-1)
	fmt.Fprintf(b, `<text x="%g" y="18" font-size="14" font-weight="bold">%s</text>`+"\n", x0, esc(p.Title))
	if p.Subtitle != "" {
		fmt.Fprintf(b, `<text x="%g" y="33" font-size="11" fill="#555">%s</text>`+"\n", x0, esc(p.Subtitle))
	}

	// Ranges.
	var xs []float64
	ymax := 0.0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			if !finite(pt.X) || !finite(pt.Y) || (p.LogX && pt.X <= 0) {
				continue
			}
			xs = append(xs, pt.X)
			ymax = math.Max(ymax, pt.Y)
			if finite(pt.Lo) && finite(pt.Hi) {
				ymax = math.Max(ymax, pt.Hi)
			}
		}
	}
	xticks := p.XTicks
	if len(xticks) == 0 {
		xticks = slices.Clone(xs)
		slices.Sort(xticks)
		xticks = slices.Compact(xticks)
	}
	all := append(slices.Clone(xs), xticks...)
	for _, v := range p.VLines {
		all = append(all, v.X)
	}
	if p.LogX {
		all = slices.DeleteFunc(all, func(v float64) bool { return v <= 0 })
	}
	xsc := scale{plo: x0, phi: x1, log2: p.LogX}
	if len(all) == 0 {
		all = []float64{1}
	}
	lo, hi := slices.Min(all), slices.Max(all)
	if p.LogX {
		lo, hi = math.Log2(lo), math.Log2(hi)
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-1, hi+1
	}
	pad := (hi - lo) * 0.06
	xsc.lo, xsc.hi = lo-pad, hi+pad

	ystep := niceStep(ymax / 5)
	ytop := math.Max(ystep, math.Ceil(ymax*1.02/ystep)*ystep)
	ysc := scale{lo: 0, hi: ytop, plo: y0, phi: y1}

	// Grid, axes and ticks.
	for v := 0.0; v <= ytop*(1+1e-9); v += ystep {
		y := ysc.at(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", x0, y, x1, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", x0-6, y, SI(v))
	}
	for _, v := range xticks {
		if p.LogX && v <= 0 {
			continue
		}
		x := xsc.at(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#f0f0f0"/>`+"\n", x, y0, x, y1)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x, y0, x, y0+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, y0+18, esc(fmt.Sprint(v)))
	}
	fmt.Fprintf(b, `<path d="M%.1f %.1fV%.1fH%.1f" fill="none" stroke="#333"/>`+"\n", x0, y1, y0, x1)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", (x0+x1)/2, panelH-10, esc(p.XLabel))
	fmt.Fprintf(b, `<text transform="translate(14,%.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", (y0+y1)/2, esc(p.YLabel))

	// Vertical markers, under the data.
	for _, v := range p.VLines {
		if p.LogX && v.X <= 0 {
			continue
		}
		x := xsc.at(v.X)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-width="1.5" stroke-dasharray="5 4"/>`+"\n", x, y0, x, y1)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" fill="#555" text-anchor="middle">%s</text>`+"\n", x, y1-5, esc(v.Label))
	}

	// Series: error bars, lines, markers. Error bars of different series at
	// the same x are spread a few pixels apart, so that they do not hide
	// each other.
	for si, s := range p.Series {
		spread := (float64(si) - float64(len(p.Series)-1)/2) * 3
		var pts [][2]float64
		for _, pt := range s.Points {
			if !finite(pt.X) || !finite(pt.Y) || (p.LogX && pt.X <= 0) {
				continue
			}
			x, y := xsc.at(pt.X), ysc.at(pt.Y)
			pts = append(pts, [2]float64{x, y})
			if finite(pt.Lo) && finite(pt.Hi) {
				ylo, yhi := ysc.at(math.Max(pt.Lo, 0)), ysc.at(pt.Hi)
				ex := x + spread
				fmt.Fprintf(b, `<path d="M%.1f %.1fV%.1fM%.1f %.1fh6M%.1f %.1fh6" stroke="%s" stroke-width="1" fill="none" opacity="0.7"/>`+"\n",
					ex, ylo, yhi, ex-3, ylo, ex-3, yhi, esc(s.Color))
			}
		}
		if len(pts) > 1 {
			var d strings.Builder
			for i, q := range pts {
				if i == 0 {
					fmt.Fprintf(&d, "M%.1f %.1f", q[0], q[1])
				} else {
					fmt.Fprintf(&d, "L%.1f %.1f", q[0], q[1])
				}
			}
			fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", d.String(), esc(s.Color), dash(s.Dash))
		}
		for _, q := range pts {
			marker(b, s.Marker, q[0], q[1], s.Color)
		}
	}

	if len(xs) == 0 {
		msg := p.NoData
		if msg == "" {
			msg = "no data"
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="13" fill="#b00" text-anchor="middle" dominant-baseline="middle">%s</text>`+"\n", (x0+x1)/2, (y0+y1)/2, esc(msg))
	}

	// Legend.
	lx, ly := x1+16, y1+14
	for i, s := range p.Series {
		y := ly + float64(i)*18
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", lx, y, lx+28, y, esc(s.Color), dash(s.Dash))
		marker(b, s.Marker, lx+14, y, s.Color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" dominant-baseline="middle">%s</text>`+"\n", lx+34, y, esc(s.Label))
	}
}

func marker(b *bufio.Writer, m Marker, x, y float64, color string) {
	c := esc(color)
	switch m {
	case Square:
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>`+"\n", x-3.5, y-3.5, c)
	case Triangle:
		fmt.Fprintf(b, `<path d="M%.1f %.1fl4.5 8h-9z" fill="%s"/>`+"\n", x, y-5, c)
	case Diamond:
		fmt.Fprintf(b, `<path d="M%.1f %.1fl4.5 4.5l-4.5 4.5l-4.5 -4.5z" fill="%s"/>`+"\n", x, y-4.5, c)
	default:
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", x, y, c)
	}
}

func dash(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + esc(d) + `"`
}

func esc(s string) string { return html.EscapeString(s) }

func finite(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// niceStep returns the smallest of 1, 2, 2.5 or 5 times a power of ten
// that is at least x (1 for x <= 0).
func niceStep(x float64) float64 {
	if x <= 0 || !finite(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// SI formats x with at most three significant digits and an SI suffix, as
// in "12.3M", "250k" or "0".
func SI(x float64) string {
	if x == 0 || !finite(x) {
		return fmt.Sprint(x)
	}
	suffix := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for math.Abs(x) >= 999.5 && i < len(suffix)-1 {
		x /= 1000
		i++
	}
	var s string
	switch ax := math.Abs(x); {
	case ax >= 99.95:
		s = fmt.Sprintf("%.0f", x)
	case ax >= 9.995:
		s = fmt.Sprintf("%.1f", x)
	default:
		s = fmt.Sprintf("%.2f", x)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + suffix[i]
}
