// Command chanbench sweeps GOMAXPROCS across the machine's NUMA domains and
// measures chans against native Go channels on the same workloads, in the
// same process.
//
//	go run ./cmd/chanbench            # a representative subset, about a minute on 2 cores
//	go run ./cmd/chanbench -h         # flags
//	go run ./cmd/chanbench -workloads all -impls all -count 10 -o /tmp/cb
//
// It prints a table per workload (median messages/s with a 95% confidence
// interval, ns per message, the ratio to native with a p-value, and the share
// of the fetch-and-add floor), and writes to the -o directory the raw results
// in Go benchmark format (results.txt, for benchstat), the tables
// (tables.txt) and a plot of the sweep (sweep.svg). See -h for the rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

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
	e := detectEnv(o, topo)

	var prog *progress
	if f, ok := stderr.(*os.File); ok && isTerminal(f) {
		prog = newProgress(stderr)
	}
	header := sw.header(e)
	if prog != nil {
		fmt.Fprint(stderr, header)
	}
	runErr := sw.run(ctx, runner, prog)

	status := exitOK
	switch {
	case errors.Is(runErr, errInterrupted):
		fmt.Fprintln(stderr, "chanbench: interrupted; reporting the runs so far")
		status = exitInterrupted
	case runErr != nil:
		fmt.Fprintf(stderr, "chanbench: %v\n", runErr)
		status = exitFail
	}

	var tables strings.Builder
	tables.WriteString(header)
	tables.WriteString("\n")
	sw.writeTables(&tables)
	fmt.Fprint(stdout, tables.String())

	if o.out != "" {
		if err := sw.writeFiles(o.out, e, tables.String()); err != nil {
			fmt.Fprintf(stderr, "chanbench: %v\n", err)
			if status == exitOK {
				status = exitFail
			}
		} else {
			fmt.Fprintf(stdout, "\nwrote %s, %s and %s\n",
				filepath.Join(o.out, "results.txt"), filepath.Join(o.out, "tables.txt"), filepath.Join(o.out, "sweep.svg"))
		}
	}
	return status
}

// header describes the machine and the plan, as the tables' first lines.
func (sw *sweep) header(e env) string {
	var b strings.Builder
	fmt.Fprintf(&b, "command: %s\n", commandLine(sw.o.args))
	fmt.Fprintf(&b, "machine: %s/%s, %s, %s\n", e.goos, e.goarch, e.cpu, e.machine)
	fmt.Fprintf(&b, "topology: %s\n", sw.topo)
	fmt.Fprintf(&b, "go: %s, commit %s\n", e.goVersion, e.commit)
	per := fmt.Sprintf("runs of about %v", sw.o.d)
	if sw.o.n > 0 {
		per = fmt.Sprintf("runs of %d messages", sw.o.n)
	}
	pin := "not pinned"
	if sw.o.pin {
		pin = "pinned to the first GOMAXPROCS CPUs in domain order"
	}
	fmt.Fprintf(&b, "sweep: GOMAXPROCS %s; %d %s per point; %s\n", joinInts(sw.procs), sw.o.count, per, pin)
	return b.String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// writeFiles writes results.txt, tables.txt and sweep.svg into dir.
func (sw *sweep) writeFiles(dir string, e env, tables string) error {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	write := func(name string, fill func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fill(f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %v", path, err)
		}
		return f.Close()
	}
	if err := write("results.txt", func(w io.Writer) error { return sw.writeResults(w, e) }); err != nil {
		return err
	}
	if err := write("tables.txt", func(w io.Writer) error { _, err := io.WriteString(w, tables); return err }); err != nil {
		return err
	}
	return write("sweep.svg", func(w io.Writer) error { return sw.writePlot(w, e) })
}
