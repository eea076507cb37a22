// Command chanbench sweeps GOMAXPROCS across the machine's NUMA domains and
// measures chans against native Go channels on the same workloads, in the
// same process.
//
//	go run ./cmd/chanbench            # a representative subset, about a minute on 2 cores
//	go run ./cmd/chanbench -h         # flags
//	go run ./cmd/chanbench -workloads all -impls all -count 10 -o /tmp/cb
//
// It prints a table per workload (median time per operation with a 95%
// confidence interval, the time ratio to native with a p-value, where below
// 1.00x means chans is faster, and the time of one atomic add for scale),
// and writes to the -o directory the raw results in Go benchmark format
// (results.txt, for benchstat), the tables (tables.txt) and a plot of the
// sweep (sweep.svg): only once the sweep is complete, or, if it is
// interrupted, to a partial-* directory beside them. See -h for the rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/scalable-go/chans/internal/topology"
	"github.com/scalable-go/chans/internal/workload"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitInterrupted = 130 // as a shell reports death by SIGINT
)

// run is chanbench with its command line, output streams and an interrupt
// as a context; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, stdout, stderr, workload.Run)
}

// runWith is run with the workload runner as a parameter, for tests.
func runWith(ctx context.Context, args []string, stdout, stderr io.Writer, runner runFunc) int {
	o, usage, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "chanbench: %v (see chanbench -h)\n", err)
		return exitUsage
	}

	var topo topology.Topology
	if o.sysfs == "/sys" {
		topo = topology.Detect()
	} else if topo, err = topology.Read(o.sysfs); err != nil {
		fmt.Fprintf(stderr, "chanbench: -sysfs: %v\n", err)
		return exitUsage
	}
	if o.pin && o.sysfs != "/sys" {
		fmt.Fprintln(stderr, "chanbench: -pin needs the machine's own topology, not -sysfs")
		return exitUsage
	}
	sw := newSweep(o, topo)
	over := sw.oversubscribed()
	if o.pin && len(over) > 0 {
		fmt.Fprintf(stderr, "chanbench: -pin with GOMAXPROCS %s: more than the %s this process may use, so pinning cannot give each GOMAXPROCS a CPU of its own (drop -pin to measure oversubscription anyway)\n",
			joinInts(over), plural(topo.NumCPU(), "CPU"))
		return exitUsage
	}

	// Check -o before the sweep, not after it.
	var out *outDir
	if o.out != "" {
		if out, err = prepareOut(o.out); err != nil {
			fmt.Fprintf(stderr, "chanbench: -o %s: %v\n", o.out, err)
			return exitFail
		}
	}
	e := detectEnv(o, topo)
	e.tripBefore = roundTrip()

	header := sw.header(e)
	var prog *progress
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		prog = newLiveProgress(stderr, func() int {
			w, _, err := term.GetSize(int(f.Fd()))
			if err != nil {
				return 0
			}
			return w
		})
		fmt.Fprint(stderr, header)
	} else {
		prog = newPlainProgress(stderr)
	}
	if len(over) > 0 {
		fmt.Fprintf(stderr, "chanbench: warning: GOMAXPROCS %s exceeds the %s; those points time-share CPUs\n",
			joinInts(over), plural(topo.NumCPU(), "CPU"))
	}
	runErr := sw.run(ctx, runner, prog)
	if e.tripBefore != 0 && runErr == nil {
		e.tripAfter = roundTrip()
		header = sw.header(e)
	}

	status := exitOK
	switch {
	case errors.Is(runErr, errInterrupted):
		fmt.Fprintln(stderr, "chanbench: interrupted; reporting the runs so far as partial results")
		status = exitInterrupted
	case runErr != nil:
		fmt.Fprintf(stderr, "chanbench: %v\n", runErr)
		status = exitFail
	}

	var tables strings.Builder
	tables.WriteString(header)
	if sw.interrupted {
		tables.WriteString(sw.interruptedNote())
	}
	tables.WriteString("\n")
	sw.writeTables(&tables)
	fmt.Fprint(stdout, tables.String())

	if out != nil {
		msg, err := sw.save(out, e, tables.String())
		if err != nil {
			fmt.Fprintf(stderr, "chanbench: %v\n", err)
			if status == exitOK {
				status = exitFail
			}
		} else {
			fmt.Fprint(stdout, "\n"+wrap(msg, tableWidth, "  "))
		}
	}
	return status
}

// save writes the run's files through out: into its directory if the sweep
// is complete, else into a partial directory beside the files of any
// earlier run. It returns a line that says where they went.
func (sw *sweep) save(out *outDir, e env, tables string) (string, error) {
	err := out.write(map[string]func(io.Writer) error{
		"results.txt": func(w io.Writer) error { return sw.writeResults(w, e) },
		"tables.txt":  func(w io.Writer) error { _, err := io.WriteString(w, tables); return err },
		"sweep.svg":   func(w io.Writer) error { return sw.writePlot(w, e) },
	})
	if err != nil {
		out.discard()
		return "", err
	}
	if sw.interrupted {
		dir, err := out.keepPartial(time.Now())
		if err != nil {
			out.discard()
			return "", err
		}
		return fmt.Sprintf("wrote the partial results of this interrupted run (%s) to %s; any earlier complete results in %s are untouched",
			strings.Join(outFiles, ", "), dir, out.dir), nil
	}
	if err := out.commit(); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %s to %s", strings.Join(outFiles, ", "), out.dir), nil
}

// header describes the machine, the plan and how to read the tables, as
// their first lines.
func (sw *sweep) header(e env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\n", commandLine(sw.o.args))
	// A CPU's name and a kernel's version can make the machine's lines
	// longer than the tables: they wrap like the notes below.
	b.WriteString(wrap(fmt.Sprintf("machine: %s/%s, %s, %s", e.goos, e.goarch, e.cpu, e.machine), tableWidth, "  "))
	b.WriteString(wrap(fmt.Sprintf("topology: %s", sw.topo), tableWidth, "  "))
	b.WriteString(wrap(fmt.Sprintf("go: %s, commit %s", e.goVersion, e.commit), tableWidth, "  "))
	if n := roundTripNote(e.tripBefore, e.tripAfter); n != "" {
		b.WriteString(wrap(n, tableWidth, "  "))
	}
	per := fmt.Sprintf("%s of about %v", plural(sw.o.count, "run"), sw.o.d)
	if sw.o.n > 0 {
		per = fmt.Sprintf("%s of %s", plural(sw.o.count, "run"), plural(sw.o.n, "message"))
	}
	pin := "not pinned"
	if sw.o.pin {
		pin = "pinned to the first GOMAXPROCS CPUs in domain order"
	}
	fmt.Fprintf(&b, "sweep: GOMAXPROCS %s; %s per point; %s\n", joinInts(sw.procs), per, pin)
	if over := sw.oversubscribed(); len(over) > 0 {
		fmt.Fprintf(&b, "warning: GOMAXPROCS %s exceeds the %s; those points time-share CPUs\n", joinInts(over), plural(sw.topo.NumCPU(), "CPU"))
	}
	b.WriteString(wrap("ns/op: median wall time per operation (one message moved; one attempt or one add where the workload says so), with the 95% confidence interval (CI) of the median.", tableWidth, "  "))
	if r := sw.ratioNote(); r != "" {
		b.WriteString(wrap(r, tableWidth, "  "))
	}
	if _, ok := sw.floor(); ok {
		b.WriteString(wrap("faa ns/op: the time of one atomic fetch-and-add on one shared counter at that GOMAXPROCS. It is not a channel: it is the cost of the simplest update of shared memory, shown for scale.", tableWidth, "  "))
	}
	return b.String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
