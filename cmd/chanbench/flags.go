package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/scalable-go/chans/internal/workload"
)

// Defaults. With the default subset (13 series) on a 2-core machine
// (GOMAXPROCS 1 and 2), 6 repetitions of 300 ms each come to 47 s of timed
// runs; calibration, garbage collection and set-up bring the whole sweep to
// about a minute. Six is the fewest repetitions for which benchmath can give
// a 95% confidence interval of the median without assuming a distribution.
const (
	defaultDuration = 300 * time.Millisecond
	defaultCount    = 6
	defaultWork     = 100
	defaultOut      = "chanbench-out"
	confidence      = 0.95 // as benchstat
)

// defaultWorkloads is the representative subset run when -workloads is not
// given: the contended multi-producer multi-consumer case at three
// capacities, the actor pattern, a round trip, a non-blocking failure, and
// the fetch-and-add floor that puts the rest in proportion.
var defaultWorkloads = []string{"mpmc", "mpsc", "pingpong", "tryrecv-empty", "faa"}

// defaultCaps gives each capacity-using workload its capacities when -caps
// is not given; workloads not listed get [0 1024].
var defaultCaps = map[string][]int{
	"mpmc":          {0, 1024, -1},
	"mpsc":          {1024},
	"spsc-pair":     {1024},
	"pingpong":      {0},
	"tryrecv-empty": {0},
	"trysend-full":  {0},
	"select-quit":   {0},
}

// implFree names the workloads that do not use Config.Impl: they run once
// per point instead of once per implementation.
var implFree = map[string]bool{"faa": true}

// options is a parsed command line.
type options struct {
	workloads  []workload.Info
	caps       []int // nil: defaultCaps
	procs      []int // nil: the topology's DefaultProcs
	impls      []string
	d          time.Duration // per run, when n == 0
	n          int           // messages per run; 0: calibrate to d
	count      int
	work       int
	goroutines int
	out        string // "" writes no files
	pin        bool
	machine    string // "" describes the machine from what it reports
	sysfs      string
	args       []string // the command line, for the record
}

// usageError is a bad command line: one line on stderr and exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

const usageHead = `usage: chanbench [flags]

chanbench measures chans against native Go channels. For each GOMAXPROCS in
the sweep it runs every selected workload with every implementation and
capacity, -count times each, and prints a table per workload: the median
time per operation (ns/op: one message moved, or one attempt or add where
the workload says so) with its 95% confidence interval, and the ratio of
each implementation's time to native's with a Mann-Whitney U test p-value
(benchmath, as benchstat computes them). Ratios are time per operation,
chans/native: below 1.00x means chans is faster. Without flags it runs a
representative subset on GOMAXPROCS 1, 2, 4, ... up to the number of CPUs,
which takes about a minute on a 2-core machine.

The faa workload is not a channel: it times atomic fetch-and-adds on one
shared counter from GOMAXPROCS goroutines. Its ns/op, shown in every other
table as "faa ns/op", is the cost of one such add at that GOMAXPROCS: the
simplest update of shared memory, there to put the channels' times in
proportion.

NUMA: the CPUs are read from sysfs (one domain outside Linux) and ordered
domain by domain, so that point p of the sweep stands for the first p CPUs
and fills one domain before crossing into the next. The first point that
spans a new domain is marked with * in the tables and by a dashed line in the
plot. Without -pin that ordering is what an ideal scheduler would do; with
-pin every thread of the process is restricted to those CPUs.

More GOMAXPROCS than CPUs: with -pin, chanbench refuses a -procs value above
the number of CPUs the process may use, since pinning cannot then give each
GOMAXPROCS a CPU of its own. Without -pin such points are run, with a
warning on stderr and in the tables, as an oversubscribed machine.

Cross-core round trip: the header gives the time for one cache line to go
from one core to another and back, measured before and after the runs. On
shared virtual machines it changes as the host moves virtual CPUs (on one
2-core VM it was either about 120 ns or about 360 ns, minutes at a time),
and every result at GOMAXPROCS 2 or more changes with it: compare runs
taken at similar round trips.

Files written to -o (created if need be, and checked before the sweep):
  results.txt  raw results in Go benchmark format (ns/op, B/op, allocs/op),
               for benchstat:
               benchstat -col /impl results.txt    (chans against native)
               benchstat -ignore commit old/results.txt new/results.txt
  tables.txt   the tables printed on stdout, headed by the exact command
  sweep.svg    time per operation against GOMAXPROCS, a panel per workload
The files are written to a hidden directory inside -o first, and replace the
previous run's files only once the sweep is complete. An interrupted sweep's
files go to -o/partial-DATE-TIME instead, never over a complete run, and
their first lines say that the run was interrupted and which points are
missing.

Progress goes to stderr: on a terminal, a status line fitted to its width;
otherwise a line per finished point. Ctrl-C stops the sweep, prints what it
has and keeps it as partial results; a second Ctrl-C kills at once and
writes nothing. Exit status: 0 done, 1 a run or output failed, 2 bad command
line, 130 interrupted.

Flags:
`

// parseArgs parses the command line. It returns flag.ErrHelp for -h, a
// *usageError for anything else wrong, and the usage text either way.
func parseArgs(args []string) (*options, string, error) {
	o := &options{args: args}
	fs := flag.NewFlagSet("chanbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)

	infos := workload.Workloads()
	var names []string
	for _, w := range infos {
		names = append(names, w.Name)
	}
	workloads := strings.Join(defaultWorkloads, ",")
	impls := workload.Native + "," + workload.Chans
	var caps, procs string

	fs.StringVar(&workloads, "workloads", workloads, "comma-separated `list` of workloads, or all:\n"+describe(infos))
	fs.StringVar(&impls, "impls", impls, "comma-separated `list` of implementations, or all: "+strings.Join(workload.Impls(), ", "))
	fs.StringVar(&caps, "caps", "", "comma-separated channel capacities, `list` of 0, n > 0, or unbounded (-1);\ndefault per workload: mpmc 0,1024,unbounded; mpsc, spsc-pair 1024; others 0")
	fs.StringVar(&procs, "procs", "", "comma-separated GOMAXPROCS `list` (default 1, 2, 4, ... up to the number of\nCPUs, the number of CPUs, and the size of each filled NUMA domain)")
	fs.DurationVar(&o.d, "d", defaultDuration, "target `duration` of each run; the message count is calibrated per point")
	fs.IntVar(&o.n, "n", 0, "fixed `messages` per run instead of calibrating to -d")
	fs.IntVar(&o.count, "count", defaultCount, "repeat each point `n` times; 6 or more give a 95% confidence interval")
	fs.IntVar(&o.work, "work", defaultWork, "mean local work between operations, in `ns` (geometric), for workloads that use it")
	fs.IntVar(&o.goroutines, "goroutines", 0, "run `n` goroutines in workloads that take a count; 0: the workload's default,\nsuch as 2*GOMAXPROCS for mpmc")
	fs.StringVar(&o.out, "o", defaultOut, "output `dir`ectory for results.txt, tables.txt and sweep.svg (partial-* for\nan interrupted run); \"\" writes none")
	fs.BoolVar(&o.pin, "pin", false, "pin the process to the sweep's CPUs at each point (Linux: sched_setaffinity on\nevery thread); refuses -procs above the number of CPUs")
	fs.StringVar(&o.machine, "machine", "", "`description` of the machine for the results (default: CPUs, NUMA nodes and\nkernel)")
	fs.StringVar(&o.sysfs, "sysfs", "/sys", "sysfs `root` to read the NUMA topology from (for testing)")

	usage := func() string {
		var b strings.Builder
		b.WriteString(usageHead)
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		return b.String()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, usage(), err
		}
		return nil, usage(), &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, usage(), usagef("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var err error
	if o.workloads, err = parseWorkloads(workloads, infos, names); err != nil {
		return nil, usage(), err
	}
	if o.impls, err = parseImpls(impls); err != nil {
		return nil, usage(), err
	}
	if set["caps"] {
		if o.caps, err = parseCaps(caps); err != nil {
			return nil, usage(), err
		}
	}
	if set["procs"] {
		if o.procs, err = parseProcs(procs); err != nil {
			return nil, usage(), err
		}
	}
	switch {
	case set["d"] && set["n"]:
		return nil, usage(), usagef("-d and -n are mutually exclusive")
	case o.d <= 0:
		return nil, usage(), usagef("invalid value %q for flag -d: must be positive", o.d)
	case set["n"] && o.n <= 0:
		return nil, usage(), usagef("invalid value \"%d\" for flag -n: must be positive", o.n)
	case o.count <= 0:
		return nil, usage(), usagef("invalid value \"%d\" for flag -count: must be positive", o.count)
	case o.work < 0:
		return nil, usage(), usagef("invalid value \"%d\" for flag -work: must not be negative", o.work)
	case o.goroutines < 0:
		return nil, usage(), usagef("invalid value \"%d\" for flag -goroutines: must not be negative", o.goroutines)
	}
	return o, usage(), nil
}

// describe lists the workloads for -h, each description wrapped to fit 80
// columns under the flag package's indentation.
func describe(infos []workload.Info) string {
	const indent = 17 // "  " + a 14-column name + " "
	var b strings.Builder
	for _, w := range infos {
		pad := strings.Repeat(" ", indent)
		doc := wrap(pad+w.Doc, 80-8, pad) // flag indents each line by 8
		fmt.Fprintf(&b, "  %-14s %s", w.Name, doc[indent:])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func parseWorkloads(s string, infos []workload.Info, names []string) ([]workload.Info, error) {
	list := splitList(s)
	if len(list) == 1 && list[0] == "all" {
		return infos, nil
	}
	if len(list) == 0 {
		return nil, usagef("invalid value %q for flag -workloads: empty list", s)
	}
	var out []workload.Info
	for _, name := range list {
		i := slices.Index(names, name)
		if i < 0 {
			return nil, usagef("invalid value %q for flag -workloads: unknown workload %q (want all or some of %s)", s, name, strings.Join(names, ","))
		}
		if !slices.ContainsFunc(out, func(w workload.Info) bool { return w.Name == name }) {
			out = append(out, infos[i])
		}
	}
	return out, nil
}

func parseImpls(s string) ([]string, error) {
	all := workload.Impls()
	list := splitList(s)
	if len(list) == 1 && list[0] == "all" {
		return all, nil
	}
	if len(list) == 0 {
		return nil, usagef("invalid value %q for flag -impls: empty list", s)
	}
	var out []string
	for _, impl := range list {
		if !slices.Contains(all, impl) {
			return nil, usagef("invalid value %q for flag -impls: unknown implementation %q (want all or some of %s)", s, impl, strings.Join(all, ","))
		}
		if !slices.Contains(out, impl) {
			out = append(out, impl)
		}
	}
	// Native first, so that ratios have their baseline at hand.
	slices.SortStableFunc(out, func(a, b string) int { return slices.Index(all, a) - slices.Index(all, b) })
	return out, nil
}

func parseCaps(s string) ([]int, error) {
	list := splitList(s)
	if len(list) == 0 {
		return nil, usagef("invalid value %q for flag -caps: empty list", s)
	}
	var out []int
	for _, f := range list {
		c, err := strconv.Atoi(f)
		switch {
		case f == "unbounded" || f == "inf":
			c = -1
		case err != nil || c < -1:
			return nil, usagef("invalid value %q for flag -caps: bad capacity %q (want 0, n > 0, or unbounded)", s, f)
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// maxProcs bounds -procs: far beyond any machine, small enough that a typo
// does not ask the runtime for a million Ps.
const maxProcs = 4096

func parseProcs(s string) ([]int, error) {
	list := splitList(s)
	if len(list) == 0 {
		return nil, usagef("invalid value %q for flag -procs: empty list", s)
	}
	var out []int
	for _, f := range list {
		p, err := strconv.Atoi(f)
		if err != nil || p < 1 || p > maxProcs {
			return nil, usagef("invalid value %q for flag -procs: bad GOMAXPROCS %q (want 1 to %d)", s, f, maxProcs)
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// capsFor returns the capacities a workload runs at: one (ignored) for
// workloads that take none.
func (o *options) capsFor(w workload.Info) []int {
	switch {
	case !w.UsesCap:
		return []int{0}
	case o.caps != nil:
		return o.caps
	case defaultCaps[w.Name] != nil:
		return defaultCaps[w.Name]
	}
	return []int{0, 1024}
}

// implsFor returns the implementations a workload runs with: one (ignored)
// for workloads that take none.
func (o *options) implsFor(w workload.Info) []string {
	if implFree[w.Name] {
		return []string{workload.Native}
	}
	return o.impls
}
