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
		for _, flag := range []string{"-workloads", "-caps", "-procs", "-impls", "-d ", "-n ", "-count", "-work ", "-goroutines", "-o ", "-pin", "-machine", "-sysfs", "benchstat", "results.txt", "sweep.svg", "tables.txt", "NUMA", "mpmc", "faa"} {
			if !strings.Contains(stdout, flag) {
				t.Errorf("%s: usage lacks %q", arg, flag)
			}
		}
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
	if code != exitOK || stderr != "" {
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

	// Tables: one per workload, the crossing at 9 marked, chans 1.25 times
	// native (100 vs 80 ns per message, both stretched by 2.5% at the
	// median), and floor shares (2.05 ns per add at the median: 2.05/102.5 and 2.05/82).
	for _, want := range []string{
		"mpmc: ", "faa: ", "9*", "* first GOMAXPROCS whose CPUs span another NUMA domain",
		"native msgs/s", "chans msgs/s", "chans/native", "1.25× (p=0.002 n=6)", "chans/faa",
		"9.76M", "12.2M", "102", "82.0", "±2%", "2.0%", "2.5%", "488M", "2.05",
		"topology: 2 NUMA nodes: node0 cpus 0-3,8-11, node1 cpus 4-7,12-15", "test box",
		"command: chanbench -sysfs",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("tables lack %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "~1.25×") {
		t.Errorf("a constant 1.25× difference over 6 runs is reported as not significant:\n%s", stdout)
	}
	tables, err := os.ReadFile(filepath.Join(dir, "tables.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout, string(tables)) {
		t.Errorf("tables.txt differs from stdout:\n%s", tables)
	}

	// Results: every run, named for benchstat, with the configuration.
	res, units := readResults(t, filepath.Join(dir, "results.txt"))
	if len(res) != len(f.calls) {
		t.Errorf("%d results, want %d", len(res), len(f.calls))
	}
	if units.GetBetter("msgs/s") != 1 {
		t.Error("msgs/s is not marked better=higher")
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
		for _, unit := range []string{"sec/op", "msgs/s", "B/op", "allocs/op"} {
			if _, ok := r.Value(unit); !ok {
				t.Errorf("%s: no %s", r.Name, unit)
			}
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
	for _, want := range []string{"mpmc", "faa", "native cap=0", "chans cap=unbounded", "2 NUMA domains", "GOMAXPROCS", "messages/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("plot lacks %q", want)
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
// stops, prints and writes what it has, and exits 130.
func TestInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := &fake{after: func(calls int) {
		if calls == 10 {
			cancel()
		}
	}}
	dir := t.TempDir()
	code, stdout, stderr := runFake(t, ctx, f, "-n", "100", "-procs", "1,2", "-workloads", "mpmc,mpsc", "-o", dir)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d", code, exitInterrupted)
	}
	if len(f.calls) != 10 {
		t.Errorf("%d runs after cancelling at the 10th", len(f.calls))
	}
	if !strings.Contains(stderr, "interrupted") || !strings.Contains(stdout, "mpmc: ") || !strings.Contains(stdout, "mpsc: ") {
		t.Errorf("stderr %q, stdout:\n%s", stderr, stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "2 ") {
			t.Errorf("row for GOMAXPROCS 2, which was never reached: %q", line)
		}
	}
	res, _ := readResults(t, filepath.Join(dir, "results.txt"))
	if len(res) != 10 {
		t.Errorf("%d results written, want 10", len(res))
	}
	checkSVG(t, filepath.Join(dir, "sweep.svg"))
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
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, lost.Error()) {
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
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "note: select-quit impl=chans") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

func TestOutputFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runFake(t, context.Background(), &fake{}, "-n", "10", "-count", "1", "-procs", "1", "-workloads", "faa", "-o", filepath.Join(file, "sub"))
	if code != exitFail || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestProgress(t *testing.T) {
	o, _, err := parseArgs([]string{"-n", "10", "-count", "2", "-procs", "1", "-workloads", "mpsc,faa"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := newProgress(&b)
	clock := time.Unix(0, 0)
	p.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	sw := newSweep(o, topology.Single([]int{0}))
	if err := sw.run(context.Background(), (&fake{}).run, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"\r\033[K[0/6, ? left] GOMAXPROCS=1 mpsc impl=native cap=1024 calibrating", "[6/6, 0s left]", "(last run: ", " msgs/s)", "run 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("progress line not erased at the end: %q", out[max(0, len(out)-40):])
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
	}{{0, "0"}, {5, "5.00"}, {12.34, "12.3"}, {999.4, "999"}, {999.6, "1.00k"}, {1.234e6, "1.23M"}, {456e6, "456M"}} {
		if got := si(tc.x); got != tc.want {
			t.Errorf("si(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
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
