package main

import (
	"fmt"
	"io"
	"time"
)

// progress draws one status line on a terminal during a sweep, rewriting it
// in place. A nil *progress draws nothing, which is what a sweep gets when
// stderr is not a terminal.
type progress struct {
	w        io.Writer
	now      func() time.Time
	total    int // timed runs planned
	finished int // timed runs finished or skipped
	began    time.Time
	pt       point            // the point being measured
	line     string           // its description
	last     map[point]string // each point's last throughput
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, now: time.Now, last: make(map[point]string)}
}

func (p *progress) start(total int) {
	if p == nil {
		return
	}
	p.total, p.began = total, p.now()
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

func (p *progress) ran(s sample) {
	if p == nil {
		return
	}
	p.finished++
	p.last[p.pt] = si(s.msgsPerSec()) + " msgs/s"
	p.draw()
}

func (p *progress) skip(runs int) {
	if p == nil {
		return
	}
	p.finished += runs
	p.draw()
}

func (p *progress) draw() {
	eta := "?"
	if p.finished > 0 {
		el := p.now().Sub(p.began)
		left := time.Duration(float64(el) / float64(p.finished) * float64(p.total-p.finished))
		eta = left.Round(time.Second).String()
	}
	s := fmt.Sprintf("[%d/%d, %s left] %s", p.finished, p.total, eta, p.line)
	if last := p.last[p.pt]; last != "" {
		s += " (last run: " + last + ")"
	}
	fmt.Fprintf(p.w, "\r\033[K%s", s)
}

// done erases the status line.
func (p *progress) done() {
	if p == nil {
		return
	}
	fmt.Fprint(p.w, "\r\033[K")
}
