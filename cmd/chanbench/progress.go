package main

import (
	"fmt"
	"io"
	"time"
	"unicode/utf8"
)

// progress reports a sweep on stderr while it runs, in one of two forms.
// Live (stderr is a terminal): one status line, rewritten in place and cut
// to the terminal's width so that it never wraps. Plain (a file or a pipe):
// one line per finished point, and nothing else, so that a log shows how
// far the sweep got. A nil *progress reports nothing.
type progress struct {
	w     io.Writer
	live  bool
	width func() int // live: the terminal's columns, read at every draw; <= 0 if unknown
	now   func() time.Time

	total, finished int // timed runs planned, and finished or skipped
	points, done    int // points planned, and finished
	began           time.Time
	pt              point            // the point being measured
	line            string           // its description
	last            map[point]string // each point's last time per operation
}

// defaultWidth is assumed when the terminal does not say how wide it is.
const defaultWidth = 80

// newLiveProgress returns a progress that keeps a status line on the
// terminal w, whose width in columns width reports (0 or less: unknown).
func newLiveProgress(w io.Writer, width func() int) *progress {
	return &progress{w: w, live: true, width: width, now: time.Now, last: make(map[point]string)}
}

// newPlainProgress returns a progress that writes a line per finished point
// to w.
func newPlainProgress(w io.Writer) *progress {
	return &progress{w: w, now: time.Now, last: make(map[point]string)}
}

// start begins the sweep's report: runs timed runs over points points.
func (p *progress) start(runs, points int) {
	if p == nil {
		return
	}
	p.total, p.points, p.began = runs, points, p.now()
	if !p.live {
		fmt.Fprintf(p.w, "chanbench: measuring %s, %s; a line as each point finishes\n",
			plural(points, "point"), plural(runs, "timed run"))
	}
}

// show announces the run about to start: repetition rep (from 1) of pt, or
// its calibration when rep is 0.
func (p *progress) show(pt point, rep int, note string) {
	if p == nil {
		return
	}
	if note == "" {
		note = fmt.Sprintf("run %d", rep)
	}
	p.pt = pt
	p.line = fmt.Sprintf("GOMAXPROCS=%d %s %s", pt.procs, pt.s.label(), note)
	p.draw()
}

// ran counts a finished timed run.
func (p *progress) ran(s sample) {
	if p == nil {
		return
	}
	p.finished++
	p.last[p.pt] = nsString(s.nsPerMsg()) + " ns/op"
	p.draw()
}

// skip counts runs that will not happen.
func (p *progress) skip(runs int) {
	if p == nil {
		return
	}
	p.finished += runs
	p.draw()
}

// pointDone reports that pt has finished, as summary says ("363 ns/op ±6%",
// "failed: ..."): a line of its own in the plain form.
func (p *progress) pointDone(pt point, summary string) {
	if p == nil {
		return
	}
	p.done++
	if p.live {
		return
	}
	el := p.now().Sub(p.began).Round(time.Second)
	fmt.Fprintf(p.w, "chanbench: point %d/%d (%v elapsed): GOMAXPROCS=%d %s: %s\n",
		p.done, p.points, el, pt.procs, pt.s.label(), summary)
}

func (p *progress) draw() {
	if !p.live {
		return
	}
	eta := "?"
	if p.finished > 0 {
		el := p.now().Sub(p.began)
		left := time.Duration(float64(el) / float64(p.finished) * float64(p.total-p.finished))
		eta = left.Round(time.Second).String()
	}
	s := fmt.Sprintf("[%d/%d runs, %s left] %s", p.finished, p.total, eta, p.line)
	if last := p.last[p.pt]; last != "" {
		s += " (last run: " + last + ")"
	}
	fmt.Fprintf(p.w, "\r\033[K%s", fit(s, p.width()))
}

// fit cuts s to fewer than width columns (defaultWidth if width <= 0): a
// line that fills the last column makes some terminals wrap, and a wrapped
// status line is no longer erased by the next draw.
func fit(s string, width int) string {
	if width <= 0 {
		width = defaultWidth
	}
	limit := width - 1
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	n := 0
	for i := range s {
		if n == limit {
			return s[:i]
		}
		n++
	}
	return s
}

// finish erases the status line.
func (p *progress) finish() {
	if p == nil || !p.live {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}

// plural writes n and noun, with an s unless n is 1: "1 run", "6 runs".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
