package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"

	"github.com/scalable-go/chans/internal/topology"
)

// env describes the machine and the build, for the results' configuration
// lines and the headers of the tables and the plot.
type env struct {
	goos, goarch string
	cpu          string // model name
	machine      string
	goVersion    string
	commit       string
	// trips are the cross-core round trips measured before and after the
	// runs (roundTrip; 0 where not measured).
	tripBefore, tripAfter time.Duration
}

func detectEnv(o *options, topo topology.Topology) env {
	e := env{
		goos:      runtime.GOOS,
		goarch:    runtime.GOARCH,
		cpu:       "unknown",
		machine:   o.machine,
		goVersion: runtime.Version(),
		commit:    commit(),
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		e.cpu = cpuModel(f)
		f.Close()
	}
	if e.machine == "" {
		nodes := "1 NUMA node"
		if n := len(topo.Nodes); n > 1 {
			nodes = fmt.Sprintf("%d NUMA nodes", n)
		}
		e.machine = fmt.Sprintf("%s, %s, %s", plural(topo.NumCPU(), "CPU"), nodes, kernel())
	}
	return e
}

// cpuModel returns the CPU model from /proc/cpuinfo text: "model name" on
// x86, "Hardware" or "Processor" on some arm64 kernels, "cpu model" on MIPS
// and "cpu" on POWER; "unknown" if none is there.
func cpuModel(r io.Reader) string {
	keys := []string{"model name", "Hardware", "Processor", "cpu model", "cpu"}
	found := map[string]string{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, dup := found[k]; !dup && v != "" {
			found[k] = v
		}
	}
	for _, k := range keys {
		if v, ok := found[k]; ok {
			return v
		}
	}
	return "unknown"
}

// commit returns the VCS revision chanbench was built from: the build's
// vcs.revision (with "-dirty" if it had local changes), else what git says
// about the directory this source file was compiled from (which is where
// "go run ./cmd/chanbench" finds it), else "unknown".
func commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "unknown" // built with -trimpath, or elsewhere
	}
	dir := filepath.Dir(file)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "unknown"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	rev := strings.TrimSpace(string(out))
	if err != nil || rev == "" {
		return "unknown"
	}
	st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	if err == nil && len(strings.TrimSpace(string(st))) > 0 {
		rev += "-dirty"
	}
	return rev
}

// commandLine quotes args as a shell would need them.
func commandLine(args []string) string {
	parts := []string{"chanbench"}
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?[]{}()<>|&;#~") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// writeResults writes every sample in Go benchmark format, one line per
// run, with the environment as configuration lines, so that benchstat reads
// it. First come comment lines (which benchmark readers skip): the command,
// and for an interrupted sweep a warning and the missing points. Only time
// (ns/op) and allocation units are written, so that every comparison
// benchstat makes of them reads the same way as the tables' ratios: lower
// is faster.
func (sw *sweep) writeResults(w io.Writer, e env) error {
	if _, err := fmt.Fprintf(w, "# %s\n", commandLine(sw.o.args)); err != nil {
		return err
	}
	if e.tripBefore != 0 {
		fmt.Fprintf(w, "# cross-core round trip: %d ns before the runs, %d ns after\n", e.tripBefore.Nanoseconds(), e.tripAfter.Nanoseconds())
	}
	if sw.interrupted {
		fmt.Fprintln(w, "# INTERRUPTED: this run was stopped before the end; these points are missing:")
		for _, l := range sw.missing() {
			fmt.Fprintf(w, "#   %s\n", l)
		}
	}
	bw := benchfmt.NewWriter(w)
	for _, p := range sw.procs {
		res := &benchfmt.Result{}
		for _, kv := range [][2]string{
			{"goos", e.goos},
			{"goarch", e.goarch},
			{"pkg", "github.com/scalable-go/chans/cmd/chanbench"},
			{"cpu", e.cpu},
			{"machine", e.machine},
			{"go", e.goVersion},
			{"commit", e.commit},
			{"gomaxprocs", fmt.Sprint(p)},
			{"numa-domains", fmt.Sprint(sw.topo.Domains(p))},
		} {
			res.Config = append(res.Config, benchfmt.Config{Key: kv[0], Value: []byte(kv[1]), File: true})
		}
		if sw.o.pin {
			res.Config = append(res.Config, benchfmt.Config{Key: "pinned-cpus", Value: []byte(topology.FormatCPUList(sw.topo.CPUs(p))), File: true})
		}
		for _, s := range sw.series {
			res.Name = benchfmt.Name(fmt.Sprintf("%s-%d", sw.benchName(s), p))
			for _, smp := range sw.samples[point{s, p}] {
				res.Iters = smp.messages
				res.Values = []benchfmt.Value{
					{Value: roundSig(smp.nsPerMsg(), 5), Unit: "ns/op"},
					{Value: roundSig(smp.bytes, 4), Unit: "B/op"},
					{Value: roundSig(smp.allocs, 4), Unit: "allocs/op"},
				}
				if err := bw.Write(res); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// roundSig rounds x to n significant digits, so that the results file shows
// what was measured and not float noise.
func roundSig(x float64, n int) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	p := math.Pow(10, float64(n)-math.Ceil(math.Log10(math.Abs(x))))
	return math.Round(x*p) / p
}
