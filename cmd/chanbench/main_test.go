package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/perf/benchfmt"

	"github.com/scalable-go/chans/internal/topology"
	"github.com/scalable-go/chans/internal/workload"
)

const fixtures = "../../internal/topology/testdata"

// fake is a deterministic stand-in for workload.Run: a message costs a
// fixed time per implementation (native 100 ns, chans 80 ns, chans-handle
// 70 ns, faa 2 ns), stretched by 0, 1, ... 5% on a point's successive runs,
// so that the samples differ, a confidence interval exists, and six runs
// have a median of exactly 1.025 times the base cost.
type fake struct {
	calls []workload.Config
	runs  map[string]int              // runs per point
	fail  func(workload.Config) error // nil: never fail
	after func(calls int)             // called after each run
}

func (f *fake) run(cfg workload.Config) (workload.Result, error) {
	f.calls = append(f.calls, cfg)
	if f.after != nil {
		defer f.after(len(f.calls))
	}
	if f.fail != nil {
		if err := f.fail(cfg); err != nil {
			return workload.Result{}, err
		}
	}
	per := map[string]float64{workload.Native: 100, workload.Chans: 80, workload.ChansHandle: 70}[cfg.Impl]
	if cfg.Workload == "faa" {
		per = 2
	}
	if f.runs == nil {
		f.runs = map[string]int{}
	}
	key := fmt.Sprintf("%s/%s/%d/%d", cfg.Workload, cfg.Impl, cfg.Cap, runtime.GOMAXPROCS(0))
	stretch := 1 + 0.01*float64(f.runs[key]%6)
	f.runs[key]++
	return workload.Result{
		Elapsed:  time.Duration(float64(cfg.Messages) * per * stretch),
		Messages: cfg.Messages,
	}, nil
}

// runFake runs chanbench with a fake runner and returns the exit status,
// stdout and stderr.
func runFake(t *testing.T, ctx context.Context, f *fake, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := runWith(ctx, args, &stdout, &stderr, f.run)
	return code, stdout.String(), stderr.String()
}

func TestBadCommandLines(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-bogus"},
		{"-count", "0"},
		{"-count", "x"},
		{"-d", "0"},
		{"-d", "-1s"},
		{"-d", "fast"},
		{"-n", "0"},
		{"-n", "-5"},
		{"-d", "1s", "-n", "10"},
		{"-workloads", "nope"},
		{"-workloads", "mpmc,nope"},
		{"-workloads", ","},
		{"-impls", "go"},
		{"-impls", ""},
		{"-caps", "-2"},
		{"-caps", "big"},
		{"-caps", ""},
		{"-procs", "0"},
		{"-procs", "1,two"},
		{"-procs", "100000"},
		{"-work", "-1"},
		{"-goroutines", "-1"},
		{"-pin=maybe"},
		{"-sysfs", filepath.Join(dir, "missing")},
		{"-sysfs", filepath.Join(fixtures, "two-nodes"), "-pin"},
		{"extra"},
		{"-o", dir, "extra"},
		{"-pin", "-procs", fmt.Sprint(topology.Detect().NumCPU() + 1)},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			f := &fake{}
			code, stdout, stderr := runFake(t, context.Background(), f, args...)
			if code != exitUsage {
				t.Errorf("exit status %d, want %d", code, exitUsage)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !strings.HasPrefix(stderr, "chanbench: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Errorf("stderr = %q, want one line starting with chanbench:", stderr)
			}
			if len(f.calls) != 0 {
				t.Errorf("%d runs on a bad command line", len(f.calls))
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		code, stdout, stderr := runFake(t, context.Background(), &fake{}, arg)
		if code != exitOK || stderr != "" {
			t.Errorf("%s: exit %d, stderr %q", arg, code, stderr)
		}
		for _, flag := range []string{"-workloads", "-caps", "-procs", "-impls", "-d ", "-n ", "-count", "-work ", "-goroutines", "-o ", "-pin", "-machine", "-sysfs", "benchstat", "results.txt", "sweep.svg", "tables.txt", "NUMA", "mpmc", "faa",
			"below 1.00x means chans is faster", "partial-", "refuses", "not a channel", "line per finished point"} {
			if !strings.Contains(stdout, flag) {
				t.Errorf("%s: usage lacks %q", arg, flag)
			}
		}
	}
}

// TestPlainWords checks the help and the output of a sweep of every
// workload for words that mean something only to the project's authors.
func TestPlainWords(t *testing.T) {
	_, help, _ := runFake(t, context.Background(), &fake{}, "-h")
	_, out, _ := runFake(t, context.Background(), &fake{}, "-workloads", "all", "-impls", "all", "-n", "10", "-count", "1", "-procs", "1", "-o", "")
	for _, word := range []string{"seed", "issue", " bar", "Impl ", "Goroutines", "floor share", "msgs/s"} {
		for name, text := range map[string]string{"help": help, "output": out} {
			if strings.Contains(text, word) {
				t.Errorf("%s has %q", name, word)
			}
		}
	}
}

// TestOversubscribed checks that a GOMAXPROCS above the number of CPUs is
// refused with -pin (see TestBadCommandLines) and warned about without.
func TestOversubscribed(t *testing.T) {
	code, stdout, stderr := runFake(t, context.Background(), &fake{},
		"-sysfs", filepath.Join(fixtures, "two-nodes"), "-procs", "16,17", "-n", "10", "-count", "1", "-workloads", "faa", "-o", "")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	const want = "GOMAXPROCS 17 exceeds the 16 CPUs; those points time-share CPUs"
	if !strings.Contains(stderr, "chanbench: warning: "+want) || !strings.Contains(stdout, "warning: "+want) {
		t.Errorf("no warning; stderr %q, stdout:\n%s", stderr, stdout)
	}
	code, stdout, stderr = runFake(t, context.Background(), &fake{},
		"-sysfs", filepath.Join(fixtures, "two-nodes"), "-procs", "16", "-n", "10", "-count", "1", "-workloads", "faa", "-o", "")
	if code != exitOK || strings.Contains(stdout+stderr, "warning") {
		t.Errorf("exit %d, a warning at 16 of 16 CPUs: stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	n := topology.Detect().NumCPU()
	_, _, stderr = runFake(t, context.Background(), &fake{}, "-pin", "-procs", fmt.Sprint(n+1), "-n", "10", "-workloads", "faa", "-o", "")
	if !strings.Contains(stderr, fmt.Sprintf("-pin with GOMAXPROCS %d: more than the %s", n+1, plural(n, "CPU"))) {
		t.Errorf("-pin -procs %d: stderr %q", n+1, stderr)
	}
}

// TestLongMachineWraps checks that a machine description longer than the
// tables (a long CPU name and kernel version) wraps instead of widening
// the header past tableWidth columns, and that none of it is lost.
func TestLongMachineWraps(t *testing.T) {
	desc := strings.TrimSpace(strings.Repeat("a-long-cpu-name ", 12))
	code, stdout, stderr := runFake(t, context.Background(), &fake{},
		"-machine", desc, "-workloads", "faa", "-n", "10", "-count", "1", "-procs", "1", "-o", "")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	checkWidth(t, stdout)
	got := 0
	for _, line := range strings.Split(stdout, "\n") {
		if !strings.HasPrefix(line, "command: ") { // it repeats the flag
			got += strings.Count(line, "a-long-cpu-name")
		}
	}
	if got != 12 {
		t.Errorf("the header has %d of the 12 words of the machine's description:\n%s", got, stdout)
	}
}

// TestWideTables checks that tables too wide for tableWidth columns are
// split, each part repeating the columns that name the rows, and that no
// column is lost.
func TestWideTables(t *testing.T) {
	code, stdout, stderr := runFake(t, context.Background(), &fake{},
		"-impls", "all", "-workloads", "mpmc,faa", "-caps", "0,unbounded", "-n", "1000", "-count", "6", "-procs", "1,2", "-o", "")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	checkWidth(t, stdout)
	var heads []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "procs  cap ") {
			heads = append(heads, line)
		}
	}
	if len(heads) != 2 {
		t.Fatalf("mpmc in %d parts, want 2:\n%s", len(heads), stdout)
	}
	all := strings.Join(heads, " ")
	for _, col := range []string{"native ns/op", "chans ns/op", "chans-handle ns/op", "chans/native", "chans-handle/native", "faa ns/op"} {
		if strings.Count(all, col+" ") != 1 && !strings.HasSuffix(all, col) {
			t.Errorf("column %q not in exactly one part: %q", col, heads)
		}
	}
	for _, h := range heads {
		if strings.Count(h, "ns/op  CI") != strings.Count(h, "ns/op")-strings.Count(h, "faa ns/op") {
			t.Errorf("a CI column split from its median: %q", h)
		}
	}
	if !strings.Contains(stdout, "0.70x (p=0.002 n=6)") {
		t.Errorf("no chans-handle/native ratio:\n%s", stdout)
	}
}

func TestTable(t *testing.T) {
	tb := &table{keys: 1}
	for _, h := range []string{"k", "a", "a±", "b", "b±", "c"} {
		tb.add(h, strings.HasSuffix(h, "±"))
	}
	tb.rows = [][]string{{"1", "aaaa", "±1", "bbbb", "", "cccc"}, {"22", "a", "±22", "b", "±3", "c"}}
	var b strings.Builder
	tb.write(&b, 40)
	if want := "k   a     a±   b     b±  c\n1   aaaa  ±1   bbbb      cccc\n22  a     ±22  b     ±3  c\n"; b.String() != want {
		t.Errorf("at 40 columns:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	tb.write(&b, 18)
	if want := "k   a     a±\n1   aaaa  ±1\n22  a     ±22\n\nk   b     b±  c\n1   bbbb      cccc\n22  b     ±3  c\n"; b.String() != want {
		t.Errorf("at 18 columns:\n%s\nwant:\n%s", b.String(), want)
	}
	if got, want := wrap("  one two three four", 10, "    "), "  one two\n    three\n    four\n"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
	if got, want := wrap("longwordhere x", 5, ""), "longwordhere\nx\n"; got != want {
		t.Errorf("wrap = %q, want %q", got, want)
	}
}

func TestParseArgs(t *testing.T) {
	o, _, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range o.workloads {
		names = append(names, w.Name)
	}
	if !reflect.DeepEqual(names, defaultWorkloads) || !reflect.DeepEqual(o.impls, []string{"native", "chans"}) ||
		o.caps != nil || o.procs != nil || o.d != defaultDuration || o.n != 0 || o.count != defaultCount ||
		o.work != defaultWork || o.goroutines != 0 || o.out != defaultOut || o.pin {
		t.Errorf("defaults: %+v", o)
	}

	o, _, err = parseArgs([]string{"-workloads", "all", "-impls", "chans-handle, native,chans,native", "-caps", "1024, 0,unbounded,-1,64",
		"-procs", "8,1,2,2", "-n", "500", "-count", "3", "-work", "0", "-goroutines", "1000", "-o", "", "-pin"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.workloads) != len(workload.Workloads()) {
		t.Errorf("-workloads all: %d workloads", len(o.workloads))
	}
	if want := []string{"native", "chans", "chans-handle"}; !reflect.DeepEqual(o.impls, want) {
		t.Errorf("impls = %v, want %v", o.impls, want)
	}
	if want := []int{1024, 0, -1, 64}; !reflect.DeepEqual(o.caps, want) {
		t.Errorf("caps = %v, want %v", o.caps, want)
	}
	if want := []int{1, 2, 8}; !reflect.DeepEqual(o.procs, want) {
		t.Errorf("procs = %v, want %v", o.procs, want)
	}
	if o.n != 500 || o.count != 3 || o.work != 0 || o.goroutines != 1000 || o.out != "" || !o.pin {
		t.Errorf("parsed: %+v", o)
	}
}

// TestPlan checks which series a sweep runs: implementation-free workloads
// once, capacity-free ones at one capacity, the rest at every combination.
func TestPlan(t *testing.T) {
	o, _, err := parseArgs([]string{"-workloads", "mpmc,faa,pingpong", "-impls", "all"})
	if err != nil {
		t.Fatal(err)
	}
	sw := newSweep(o, topology.Single([]int{0, 1, 2, 3}))
	var got []string
	for _, s := range sw.series {
		got = append(got, sw.benchName(s))
	}
	want := []string{
		"MPMC/impl=native/cap=0/work=100", "MPMC/impl=chans/cap=0/work=100", "MPMC/impl=chans-handle/cap=0/work=100",
		"MPMC/impl=native/cap=1024/work=100", "MPMC/impl=chans/cap=1024/work=100", "MPMC/impl=chans-handle/cap=1024/work=100",
		"MPMC/impl=native/cap=unbounded/work=100", "MPMC/impl=chans/cap=unbounded/work=100", "MPMC/impl=chans-handle/cap=unbounded/work=100",
		"FAA",
		"PingPong/impl=native/cap=0/work=100", "PingPong/impl=chans/cap=0/work=100", "PingPong/impl=chans-handle/cap=0/work=100",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(sw.procs, []int{1, 2, 4}) {
		t.Errorf("procs = %v, want [1 2 4]", sw.procs)
	}
	o.goroutines = 1000
	if got := sw.benchName(sw.series[0]); got != "MPMC/impl=native/cap=0/work=100/goroutines=1000" {
		t.Errorf("with -goroutines: %s", got)
	}
	if got := benchBase("tryrecv-empty"); got != "TryRecvEmpty" {
		t.Errorf("benchBase(tryrecv-empty) = %s", got)
	}
}

// checkWidth fails for a line of out wider than tableWidth, except the
// command line, which is as long as the command.
func checkWidth(t *testing.T, out string) {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > tableWidth && !strings.HasPrefix(line, "command: ") {
			t.Errorf("line of %d columns, more than %d:\n%s", n, tableWidth, line)
		}
	}
}

// readResults parses a results file back with benchfmt.
func readResults(t *testing.T, path string) ([]*benchfmt.Result, benchfmt.UnitMetadataMap) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := benchfmt.NewReader(f, path)
	var out []*benchfmt.Result
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.Result:
			out = append(out, rec.Clone())
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out, r.Units()
}

// checkSVG parses an SVG file as XML and returns its text.
func checkSVG(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v", path, err)
		}
		if cd, ok := tok.(xml.CharData); ok {
			text.Write(cd)
			text.WriteByte('\n')
		}
	}
	if bytes.Contains(b, []byte("NaN")) {
		t.Errorf("%s contains NaN", path)
	}
	return text.String()
}

// TestSweep runs a whole sweep with the fake runner on the two-node fixture
// and checks the tables, the results file and the plot.
func TestSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	f := &fake{}
	before := runtime.GOMAXPROCS(0)
	code, stdout, stderr := runFake(t, context.Background(), f,
		"-sysfs", filepath.Join(fixtures, "two-nodes"), "-procs", "1,8,9", "-n", "1000", "-count", "6",
		"-workloads", "mpmc,faa", "-caps", "0,unbounded", "-o", dir, "-machine", "test box")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS left at %d, was %d", after, before)
	}
	// 3 procs × (2 caps × 2 impls + faa) × 6 runs, all of 1000 messages.
	if len(f.calls) != 3*5*6 {
		t.Errorf("%d runs, want %d", len(f.calls), 3*5*6)
	}
	for _, c := range f.calls {
		if c.Messages != 1000 || c.Work != defaultWork || c.Goroutines != 0 {
			t.Errorf("run with %+v", c)
		}
	}

	// Stderr, not a terminal: a first line, then one line per point.
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) != 1+15 || !strings.Contains(lines[0], "15 points, 90 timed runs") ||
		!strings.Contains(lines[1], "point 1/15") || !strings.Contains(lines[1], "GOMAXPROCS=1 mpmc impl=native cap=0: 102 ns/op ±2% (6 runs)") ||
		!strings.Contains(lines[15], "point 15/15") || !strings.Contains(lines[15], "GOMAXPROCS=9 faa: 2.05 ns/op") {
		t.Errorf("stderr, %d lines:\n%s", len(lines), stderr)
	}

	// Tables: one per workload, the crossing at 9 marked, chans taking 0.80
	// of native's time (80 vs 100 ns per message, both stretched by 2.5% at
	// the median), and faa's time (2.05 ns per add at the median) beside.
	for _, want := range []string{
		"mpmc: ", "faa: ", "9*", "* first GOMAXPROCS whose CPUs span another NUMA domain",
		"native ns/op", "chans ns/op", "chans/native", "0.80x (p=0.002 n=6)", "faa ns/op",
		"102", "82.0", "±2%", "2.05",
		"ratios: time per operation, chans/native: below 1.00x means chans is faster",
		"faa ns/op: the time of one atomic fetch-and-add on one shared counter at that GOMAXPROCS",
		"topology: 2 NUMA nodes: node0 cpus 0-3,8-11, node1 cpus 4-7,12-15", "test box",
		"command: chanbench -sysfs", "6 runs of 1000 messages per point",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tables lack %q:\n%s", want, stdout)
		}
	}
	for _, bad := range []string{"~0.80x", "1.25x", "msgs/s", "native/faa", "chans/faa", "INTERRUPTED"} {
		if strings.Contains(stdout, bad) {
			t.Errorf("tables contain %q:\n%s", bad, stdout)
		}
	}
	tables, err := os.ReadFile(filepath.Join(dir, "tables.txt"))
	if err != nil {
		t.Fatal(err)
	}
	checkWidth(t, string(tables))
	if !strings.HasPrefix(stdout, string(tables)) {
		t.Errorf("tables.txt differs from stdout:\n%s", tables)
	}
	if stage, _ := filepath.Glob(filepath.Join(dir, stagePrefix+"*")); len(stage) > 0 {
		t.Errorf("staging directory left behind: %v", stage)
	}

	// Results: every run, named for benchstat, with the configuration.
	res, _ := readResults(t, filepath.Join(dir, "results.txt"))
	if len(res) != len(f.calls) {
		t.Errorf("%d results, want %d", len(res), len(f.calls))
	}
	names := map[string]int{}
	for _, r := range res {
		names[r.Name.String()]++
		for _, key := range []string{"goos", "goarch", "cpu", "machine", "go", "commit", "gomaxprocs", "numa-domains"} {
			if r.GetConfig(key) == "" {
				t.Errorf("%s: no %s configuration", r.Name, key)
			}
		}
		if r.GetConfig("machine") != "test box" {
			t.Errorf("machine = %q", r.GetConfig("machine"))
		}
		_, procs := r.Name.Parts()
		if got, want := r.GetConfig("gomaxprocs"), strings.TrimPrefix(string(procs[len(procs)-1]), "-"); got != want {
			t.Errorf("%s: gomaxprocs %s", r.Name, got)
		}
		for _, unit := range []string{"sec/op", "B/op", "allocs/op"} {
			if _, ok := r.Value(unit); !ok {
				t.Errorf("%s: no %s", r.Name, unit)
			}
		}
		if _, ok := r.Value("msgs/s"); ok {
			t.Errorf("%s: msgs/s, whose comparisons read the other way from the tables'", r.Name)
		}
		if ns, _ := r.Value("sec/op"); r.Iters != 1000 || ns <= 0 {
			t.Errorf("%s: %d iterations, %v sec/op", r.Name, r.Iters, ns)
		}
	}
	for _, name := range []string{
		"MPMC/impl=native/cap=0/work=100-1", "MPMC/impl=chans/cap=unbounded/work=100-9", "FAA-8",
	} {
		if names[name] != 6 {
			t.Errorf("%d results named %s, want 6 (have %v)", names[name], name, names)
		}
	}
	for _, r := range res {
		want := "1"
		if strings.HasSuffix(r.Name.String(), "-9") {
			want = "2"
		}
		if got := r.GetConfig("numa-domains"); got != want {
			t.Errorf("%s: numa-domains %s, want %s", r.Name, got, want)
		}
	}

	// Plot: a panel per workload, a line per implementation and capacity,
	// the crossing marked.
	text := checkSVG(t, filepath.Join(dir, "sweep.svg"))
	for _, want := range []string{"mpmc", "faa", "native cap=0", "chans cap=unbounded", "2 NUMA domains", "GOMAXPROCS",
		"time per operation", "ns/op (lower is faster)", "not a channel"} {
		if !strings.Contains(text, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	for _, bad := range []string{"messages/s", "no data", "INTERRUPTED"} {
		if strings.Contains(text, bad) {
			t.Errorf("plot has %q", bad)
		}
	}
}

// TestCalibration checks that without -n each point's message count is
// scaled from growing calibration runs to about -d.
func TestCalibration(t *testing.T) {
	f := &fake{}
	code, stdout, stderr := runFake(t, context.Background(), f,
		"-workloads", "pingpong", "-impls", "native", "-procs", "1", "-d", "10ms", "-count", "2", "-o", "")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	var msgs []int
	for _, c := range f.calls {
		msgs = append(msgs, c.Messages)
	}
	// The fake takes 100-105 ns a message: 1000 messages take 0.1 ms, under
	// a tenth of 10 ms, so calibration aims at an eighth (about 12000
	// messages), which takes more than a tenth, and extrapolates to 10 ms,
	// rounded down to two digits.
	if len(msgs) != 4 || msgs[0] != calibrateFirst || msgs[1] < 11_000 || msgs[1] > 13_000 || msgs[2] != msgs[3] {
		t.Fatalf("message counts %v", msgs)
	}
	if msgs[2] < 90_000 || msgs[2] > 100_000 {
		t.Errorf("calibrated to %d messages, want about 10ms/100ns = 100000", msgs[2])
	}
}

func TestCalibrated(t *testing.T) {
	for _, tc := range []struct {
		n      int
		el, d  time.Duration
		want   int
		reason string
	}{
		{1000, time.Millisecond, 100 * time.Millisecond, 100_000, "exact"},
		{1000, 3 * time.Millisecond, 100 * time.Millisecond, 33_000, "two digits, rounded down"},
		{10, time.Second, time.Millisecond, 1, "at least one"},
		{1 << 29, time.Nanosecond, time.Hour, 1_000_000_000, "capped at 2^30, then rounded"},
		{7, time.Millisecond, 2 * time.Millisecond, 14, "small counts exact"},
	} {
		if got := calibrated(tc.n, tc.el, tc.d); got != tc.want {
			t.Errorf("calibrated(%d, %v, %v) = %d, want %d (%s)", tc.n, tc.el, tc.d, got, tc.want, tc.reason)
		}
	}
}

// TestInterrupt cancels the context in the middle of a sweep: chanbench
// stops, prints what it has and says which points are missing, keeps it in
// a partial directory without touching the complete results of an earlier
// run, and exits 130.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-n", "100", "-count", "2", "-procs", "1,2", "-workloads", "mpmc,mpsc,faa", "-caps", "0", "-o", dir}
	code, _, stderr := runFake(t, context.Background(), &fake{}, args...)
	if code != exitOK {
		t.Fatalf("first run: exit %d, stderr %q", code, stderr)
	}
	complete := map[string][]byte{}
	for _, name := range outFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		complete[name] = b
	}

	// With -n there are no calibration runs: at GOMAXPROCS 1 mpmc's two
	// series have their 2 runs each in calls 1-4, mpsc's in calls 5-8
	// (native, chans, native, chans), then faa. Cancelling at the 7th call
	// leaves mpsc impl=chans with 1 run of 2, faa with none, and nothing at
	// GOMAXPROCS 2.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fake{after: func(calls int) {
		if calls == 7 {
			cancel()
		}
	}}
	code, stdout, stderr := runFake(t, ctx, f, args...)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	if len(f.calls) != 7 {
		t.Errorf("%d runs after cancelling at the 7th", len(f.calls))
	}
	if !strings.Contains(stderr, "chanbench: interrupted") || !strings.Contains(stdout, "mpmc: ") || !strings.Contains(stdout, "mpsc: ") {
		t.Errorf("stderr %q, stdout:\n%s", stderr, stdout)
	}
	missing := []string{
		"INTERRUPTED: this run was stopped before the end; these points are missing:",
		"  GOMAXPROCS=1: mpsc impl=chans cap=0 (1 of 2 runs), faa",
		"  GOMAXPROCS=2: all workloads",
	}
	for _, want := range missing {
		if !strings.Contains(stdout, want+"\n") {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "2 ") {
			t.Errorf("row for GOMAXPROCS 2, which was never reached: %q", line)
		}
	}

	// The complete run's files are untouched; the partial run is beside
	// them, and says what it is.
	for _, name := range outFiles {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(b, complete[name]) {
			t.Errorf("%s of the complete run changed by an interrupted one (err %v)", name, err)
		}
	}
	partial, _ := filepath.Glob(filepath.Join(dir, "partial-*"))
	if len(partial) != 1 {
		t.Fatalf("partial directories %v, want one", partial)
	}
	if !strings.Contains(strings.ReplaceAll(stdout, "\n  ", " "), "to "+partial[0]+";") {
		t.Errorf("stdout does not say where the partial results are:\n%s", stdout)
	}
	if stage, _ := filepath.Glob(filepath.Join(dir, stagePrefix+"*")); len(stage) > 0 {
		t.Errorf("staging directory left behind: %v", stage)
	}
	res, _ := readResults(t, filepath.Join(partial[0], "results.txt"))
	if len(res) != 7 {
		t.Errorf("%d results written, want 7", len(res))
	}
	raw, err := os.ReadFile(filepath.Join(partial[0], "results.txt"))
	if err != nil || !strings.Contains(string(raw), "# INTERRUPTED") || !strings.Contains(string(raw), "#   GOMAXPROCS=2: all workloads") {
		t.Errorf("results.txt does not say it is partial (%v):\n%s", err, raw)
	}
	tables, err := os.ReadFile(filepath.Join(partial[0], "tables.txt"))
	if err != nil || !strings.HasPrefix(stdout, string(tables)) {
		t.Errorf("partial tables.txt differs from stdout (%v):\n%s", err, tables)
	}
	text := checkSVG(t, filepath.Join(partial[0], "sweep.svg"))
	for _, want := range []string{"INTERRUPTED", "GOMAXPROCS=2: all workloads", "no data: the run was interrupted"} {
		if !strings.Contains(text, want) {
			t.Errorf("plot lacks %q:\n%s", want, text)
		}
	}

	// A second interrupted run gets a directory of its own.
	f = &fake{after: func(calls int) {
		if calls == 3 {
			cancel()
		}
	}}
	ctx, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	cancel = cancel2
	if code, _, _ := runFake(t, ctx, f, args...); code != exitInterrupted {
		t.Errorf("second interrupted run: exit %d", code)
	}
	if partial, _ := filepath.Glob(filepath.Join(dir, "partial-*")); len(partial) != 2 {
		t.Errorf("partial directories %v, want two", partial)
	}
}

// TestRunFailure checks that a failing series is reported and dropped at
// that point while the sweep goes on, exiting 1; and that a workload chans
// cannot run yet is noted without failing.
func TestRunFailure(t *testing.T) {
	lost := errors.New("workload mpmc/chans: received 99 messages")
	f := &fake{fail: func(c workload.Config) error {
		switch {
		case c.Workload == "mpmc" && c.Impl == workload.Chans && c.Cap == 0 && runtime.GOMAXPROCS(0) == 2:
			return lost
		case c.Workload == "select-quit" && c.Impl != workload.Native:
			return workload.ErrSelectUnavailable
		}
		return nil
	}}
	code, stdout, stderr := runFake(t, context.Background(), f,
		"-n", "100", "-count", "2", "-procs", "1,2", "-workloads", "mpmc,select-quit", "-caps", "0,64", "-o", "")
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	if lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n"); lines[len(lines)-1] != "chanbench: "+lost.Error() ||
		!strings.Contains(stderr, "GOMAXPROCS=2 mpmc impl=chans cap=0: failed: "+lost.Error()) {
		t.Errorf("stderr = %q", stderr)
	}
	for _, want := range []string{
		"note: GOMAXPROCS=2 mpmc impl=chans cap=0: " + lost.Error(),
		"note: select-quit impl=chans cap=0: " + workload.ErrSelectUnavailable.Error(),
		"select-quit: ",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	// The failing point is run once (no retries); the unavailable series
	// once per capacity, at the first GOMAXPROCS only.
	n := 0
	for _, c := range f.calls {
		if c.Workload == "select-quit" && c.Impl == workload.Chans {
			n++
		}
	}
	if n != 2 {
		t.Errorf("select-quit/chans ran %d times, want 2", n)
	}

	f = &fake{fail: func(c workload.Config) error {
		if c.Impl != workload.Native {
			return workload.ErrSelectUnavailable
		}
		return nil
	}}
	code, stdout, stderr = runFake(t, context.Background(), f, "-n", "100", "-count", "2", "-procs", "1", "-workloads", "select-quit", "-o", "")
	if code != exitOK || strings.Contains(stderr, "chanbench: workload") || !strings.Contains(stdout, "note: select-quit impl=chans") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

// TestOutputFailure checks that an -o that cannot be created is reported
// before the sweep, not after it.
func TestOutputFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{file, filepath.Join(file, "sub")} {
		f := &fake{}
		code, stdout, stderr := runFake(t, context.Background(), f, "-n", "10", "-count", "1", "-procs", "1", "-workloads", "faa", "-o", out)
		if code != exitFail || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "chanbench: -o "+out+": ") || stdout != "" {
			t.Errorf("-o %s: exit %d, stderr %q, stdout %q", out, code, stderr, stdout)
		}
		if len(f.calls) != 0 {
			t.Errorf("-o %s: %d runs before the output failure was reported", out, len(f.calls))
		}
	}
}

// TestOutDir checks that a staging directory left by another run is not
// reused, and that a partial directory has the permissions of any other
// directory the user makes.
func TestOutDir(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, fmt.Sprintf("%s%d-0", stagePrefix, os.Getpid()))
	if err := os.Mkdir(other, 0o777); err != nil {
		t.Fatal(err)
	}
	out, err := prepareOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	if out.stage == other {
		t.Fatalf("staging directory %s reused", other)
	}
	partial, err := out.keepPartial(time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	got, err1 := os.Stat(partial)
	want, err2 := os.Stat(other)
	if err1 != nil || err2 != nil || got.Mode() != want.Mode() {
		t.Errorf("partial directory %v, want %v like os.Mkdir's (%v, %v)", got.Mode(), want.Mode(), err1, err2)
	}
}

// TestProgress checks the live status line, which must fit the terminal
// whatever its width, and the plain form, a line per finished point.
func TestProgress(t *testing.T) {
	o, _, err := parseArgs([]string{"-n", "10", "-count", "2", "-procs", "1", "-workloads", "mpsc,faa"})
	if err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{0, 40, 80, 200} {
		var b bytes.Buffer
		p := newLiveProgress(&b, func() int { return width })
		clock := time.Unix(0, 0)
		p.now = func() time.Time { clock = clock.Add(time.Second); return clock }
		sw := newSweep(o, topology.Single([]int{0}))
		if err := sw.run(context.Background(), (&fake{}).run, p); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.HasSuffix(out, "\r\033[K") {
			t.Errorf("width %d: progress line not erased at the end: %q", width, out[max(0, len(out)-40):])
		}
		limit := width - 1
		if width <= 0 {
			limit = defaultWidth - 1
		}
		draws := strings.Split(out, "\r\033[K")
		for _, d := range draws {
			if n := utf8.RuneCountInString(d); n > limit || strings.Contains(d, "\n") {
				t.Errorf("width %d: a line of %d columns: %q", width, n, d)
			}
		}
		if width == 200 {
			for _, want := range []string{"[0/6 runs, ? left] GOMAXPROCS=1 mpsc impl=native cap=1024 calibrating", "[6/6 runs, 0s left]", "(last run: 100 ns/op)", "run 2"} {
				if !strings.Contains(out, want) {
					t.Errorf("progress lacks %q:\n%q", want, out)
				}
			}
		}
	}

	var b bytes.Buffer
	p := newPlainProgress(&b)
	sw := newSweep(o, topology.Single([]int{0}))
	if err := sw.run(context.Background(), (&fake{}).run, p); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"chanbench: measuring 3 points, 6 timed runs; a line as each point finishes",
		"point 1/3", "GOMAXPROCS=1 mpsc impl=native cap=1024: 100 ns/op ±∞ (2 runs)",
		"point 2/3", "GOMAXPROCS=1 mpsc impl=chans cap=1024: 80.4 ns/op",
		"point 3/3", "GOMAXPROCS=1 faa: 2.00 ns/op",
	}
	out := b.String()
	if strings.Count(out, "\n") != 4 || strings.Contains(out, "\r") || strings.Contains(out, "\033") {
		t.Errorf("plain progress is not 4 plain lines:\n%q", out)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("plain progress lacks %q:\n%s", w, out)
		}
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		s     string
		width int
		want  string
	}{
		{"abcdef", 4, "abc"},
		{"abcdef", 7, "abcdef"},
		{"abcdef", 6, "abcde"},
		{"±±±±", 3, "±±"},
		{strings.Repeat("x", 100), 0, strings.Repeat("x", defaultWidth-1)},
	} {
		if got := fit(tc.s, tc.width); got != tc.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tc.s, tc.width, got, tc.want)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 runs"}, {1, "1 run"}, {2, "2 runs"}} {
		if got := plural(tc.n, "run"); got != tc.want {
			t.Errorf("plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
	code, stdout, stderr := runFake(t, context.Background(), &fake{},
		"-sysfs", filepath.Join(fixtures, "two-nodes"), "-procs", "1", "-count", "1", "-n", "1", "-workloads", "faa", "-o", "")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"1 run of 1 message per point", "measuring 1 point, 1 timed run;", "(1 run)"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("output lacks %q:\n%s\n%s", want, stdout, stderr)
		}
	}
	if e := detectEnv(&options{}, topology.Single([]int{0})); !strings.HasPrefix(e.machine, "1 CPU, ") {
		t.Errorf("machine = %q, want 1 CPU", e.machine)
	}
}

func TestCPUModel(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n", "AMD EPYC 7B13"},
		{"processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nHardware\t: Some SoC\n", "Some SoC"},
		{"processor\t: 0\ncpu\t\t: POWER9 (architected)\n", "POWER9 (architected)"},
		{"processor\t: 0\n", "unknown"},
		{"", "unknown"},
	} {
		if got := cpuModel(strings.NewReader(tc.in)); got != tc.want {
			t.Errorf("cpuModel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCommandLine(t *testing.T) {
	got := commandLine([]string{"-o", "my dir", "-caps", "0,1024", "-machine", "", "-workloads", "a*"})
	want := `chanbench -o "my dir" -caps 0,1024 -machine "" -workloads "a*"`
	if got != want {
		t.Errorf("commandLine = %s, want %s", got, want)
	}
	if c := commit(); c == "" {
		t.Error("commit() is empty")
	}
	if got := shortCommit("0123456789abcdef0123-dirty"); got != "0123456789ab-dirty" {
		t.Errorf("shortCommit = %s", got)
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{2.291, "2.29"}, {12.34, "12.3"}, {368.2, "368"}} {
		if got := nsString(tc.x); got != tc.want {
			t.Errorf("nsString(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
	if got := roundSig(81.27345, 4); got != 81.27 {
		t.Errorf("roundSig = %v", got)
	}
}

// TestEndToEnd runs the real workloads through run, briefly: every
// workload with every implementation at GOMAXPROCS 1 and 2.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{
		"-workloads", "all", "-impls", "all", "-n", "300", "-count", "2", "-procs", "1,2", "-o", dir,
	}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr.String(), stdout.String())
	}
	res, _ := readResults(t, filepath.Join(dir, "results.txt"))
	var bases []string
	for _, r := range res {
		base := string(r.Name.Base())
		if !slices.Contains(bases, base) {
			bases = append(bases, base)
		}
	}
	for _, w := range workload.Workloads() {
		if !slices.Contains(bases, benchBase(w.Name)) && !strings.Contains(stdout.String(), "note: "+w.Name) {
			t.Errorf("no results and no note for %s", w.Name)
		}
	}
	checkSVG(t, filepath.Join(dir, "sweep.svg"))
}

// TestPin runs a sweep pinned to the machine's CPUs and checks that the
// process's affinity is restored afterwards.
func TestPin(t *testing.T) {
	before, err := topology.Allowed()
	if err != nil {
		t.Skip(err)
	}
	code, stdout, stderr := runFake(t, context.Background(), &fake{}, "-pin", "-n", "10", "-count", "1", "-workloads", "faa", "-o", "")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "pinned to the first GOMAXPROCS CPUs") {
		t.Errorf("header does not say pinned:\n%s", stdout)
	}
	after, err := topology.Allowed()
	if err != nil || !reflect.DeepEqual(after, before) {
		t.Errorf("affinity after the sweep %v, %v; before %v", after, err, before)
	}
}

func TestRoundTripNote(t *testing.T) {
	if got := roundTripNote(0, 0); got != "" {
		t.Errorf("not measured: %q, want nothing", got)
	}
	got := roundTripNote(120*time.Nanosecond, 0)
	if !strings.HasPrefix(got, "cross-core round trip: 120 ns before the runs (") {
		t.Errorf("before the runs: %q", got)
	}
	got = roundTripNote(120*time.Nanosecond, 360*time.Nanosecond)
	if !strings.HasPrefix(got, "cross-core round trip: 120 ns before the runs, 360 ns after (") {
		t.Errorf("after the runs: %q", got)
	}
}

// TestRoundTrip checks that the probe measures something where two Ps can
// run its goroutines at once, and stays out of the way where they cannot.
func TestRoundTrip(t *testing.T) {
	if runtime.NumCPU() < 2 {
		if d := roundTrip(); d != 0 {
			t.Errorf("one CPU: %v, want 0", d)
		}
		t.Skip("needs two CPUs")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if d := roundTrip(); d != 0 {
		t.Errorf("GOMAXPROCS 1: %v, want 0 (not measured)", d)
	}
	runtime.GOMAXPROCS(2)
	if d := roundTrip(); d <= 0 {
		t.Errorf("GOMAXPROCS 2: %v, want a positive time", d)
	}
}
