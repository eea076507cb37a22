package topology

import (
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"\n", nil},
		{"0", []int{0}},
		{"0-3\n", []int{0, 1, 2, 3}},
		{"0-3,8-11", []int{0, 1, 2, 3, 8, 9, 10, 11}},
		{"0,2,5-6", []int{0, 2, 5, 6}},
		{"8-9,0-1", []int{0, 1, 8, 9}},
		{"0-2,1-3", []int{0, 1, 2, 3}},
		{"7-7", []int{7}},
	} {
		got, err := ParseCPUList(tc.in)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"3-0", "a", "0-", "-1", "0,,1", "1-2-3", "0:2", "99999999", "0-99999999"} {
		if got, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", bad, got)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 3, 8, 9, 10, 11}, "0-3,8-11"},
		{[]int{5, 0, 2, 1, 2}, "0-2,5"},
		{[]int{0, 2, 4}, "0,2,4"},
	} {
		if got := FormatCPUList(tc.in); got != tc.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := ParseCPUList(FormatCPUList(tc.in)); err != nil || len(back) != len(slices.Compact(slices.Sorted(slices.Values(tc.in)))) {
			t.Errorf("ParseCPUList(FormatCPUList(%v)) = %v, %v", tc.in, back, err)
		}
	}
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		fixture    string
		want       []Node
		procs      []int // DefaultProcs
		crossings  []bool
		boundaries []int
		str        string
	}{
		{
			fixture:   "one-node",
			want:      []Node{{0, []int{0, 1}}},
			procs:     []int{1, 2},
			crossings: []bool{false, false},
			str:       "1 NUMA node: node0 cpus 0-1",
		},
		{
			// Hyperthread-style numbering: node0 holds 0-3 and 8-11, so a
			// sweep fills those eight before touching CPU 4.
			fixture:    "two-nodes",
			want:       []Node{{0, []int{0, 1, 2, 3, 8, 9, 10, 11}}, {1, []int{4, 5, 6, 7, 12, 13, 14, 15}}},
			procs:      []int{1, 2, 4, 8, 16},
			crossings:  []bool{false, false, false, false, true},
			boundaries: []int{8},
			str:        "2 NUMA nodes: node0 cpus 0-3,8-11, node1 cpus 4-7,12-15",
		},
		{
			fixture:    "holes",
			want:       []Node{{0, []int{0, 1, 2, 8}}, {1, []int{4, 5, 6}}},
			procs:      []int{1, 2, 4, 7},
			crossings:  []bool{false, false, false, true},
			boundaries: []int{4},
			str:        "2 NUMA nodes: node0 cpus 0-2,8, node1 cpus 4-6",
		},
		{
			// CPU 6 is offline, node2 has memory and no CPUs, and all of
			// node3's CPUs are offline: only nodes 0 and 1 remain.
			fixture:    "offline",
			want:       []Node{{0, []int{0, 1, 2, 3}}, {1, []int{4, 5, 7}}},
			procs:      []int{1, 2, 4, 7},
			crossings:  []bool{false, false, false, true},
			boundaries: []int{4},
			str:        "2 NUMA nodes: node0 cpus 0-3, node1 cpus 4-5,7",
		},
		{
			fixture:    "orphans",
			want:       []Node{{0, []int{0, 1, 2, 3}}, {-1, []int{4}}},
			procs:      []int{1, 2, 4, 5},
			crossings:  []bool{false, false, false, true},
			boundaries: []int{4},
			str:        "2 NUMA nodes: node0 cpus 0-3, cpus 4",
		},
		{
			fixture:    "no-online",
			want:       []Node{{0, []int{0, 1}}, {1, []int{2, 3}}},
			procs:      []int{1, 2, 4},
			crossings:  []bool{false, false, true},
			boundaries: []int{2},
			str:        "2 NUMA nodes: node0 cpus 0-1, node1 cpus 2-3",
		},
		{
			fixture:   "no-nodes",
			want:      []Node{{-1, []int{0, 1, 2, 3}}},
			procs:     []int{1, 2, 4},
			crossings: []bool{false, false, false},
			str:       "1 NUMA node: cpus 0-3",
		},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			topo, err := Read(filepath.Join("testdata", tc.fixture))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(topo.Nodes, tc.want) {
				t.Errorf("Nodes = %v, want %v", topo.Nodes, tc.want)
			}
			procs := topo.DefaultProcs()
			if !reflect.DeepEqual(procs, tc.procs) {
				t.Errorf("DefaultProcs() = %v, want %v", procs, tc.procs)
			}
			if got := topo.Crossings(procs); !reflect.DeepEqual(got, tc.crossings) {
				t.Errorf("Crossings(%v) = %v, want %v", procs, got, tc.crossings)
			}
			if got := topo.Boundaries(); !reflect.DeepEqual(got, tc.boundaries) {
				t.Errorf("Boundaries() = %v, want %v", got, tc.boundaries)
			}
			if got := topo.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
			var order []int
			for _, n := range tc.want {
				order = append(order, n.CPUs...)
			}
			if got := topo.Order(); !reflect.DeepEqual(got, order) {
				t.Errorf("Order() = %v, want %v", got, order)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(empty dir) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := Read("testdata/bad-list"); err == nil {
		t.Error("Read(bad-list) succeeded, want an error")
	}
}

func TestDomainsAndCPUs(t *testing.T) {
	topo, err := Read("testdata/two-nodes")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p, domains int
		cpus       string
	}{
		{0, 1, ""},
		{1, 1, "0"},
		{8, 1, "0-3,8-11"},
		{9, 2, "0-4,8-11"},
		{16, 2, "0-15"},
		{64, 2, "0-15"}, // more than the machine has: every CPU
	} {
		if got := topo.Domains(tc.p); got != tc.domains {
			t.Errorf("Domains(%d) = %d, want %d", tc.p, got, tc.domains)
		}
		if got := FormatCPUList(topo.CPUs(tc.p)); got != tc.cpus {
			t.Errorf("CPUs(%d) = %s, want %s", tc.p, got, tc.cpus)
		}
	}
	// A crossing is marked once, at the first point past the boundary,
	// whatever points the sweep picks.
	if got, want := topo.Crossings([]int{2, 6, 10, 12, 16}), []bool{false, false, true, false, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("Crossings = %v, want %v", got, want)
	}
}

func TestRestrict(t *testing.T) {
	topo, err := Read("testdata/two-nodes")
	if err != nil {
		t.Fatal(err)
	}
	r := topo.Restrict([]int{4, 5, 6, 7})
	if want := []Node{{1, []int{4, 5, 6, 7}}}; !reflect.DeepEqual(r.Nodes, want) {
		t.Errorf("Restrict = %v, want %v", r.Nodes, want)
	}
	if r := topo.Restrict(nil); r.NumCPU() != 16 {
		t.Errorf("Restrict(nil) has %d CPUs, want 16", r.NumCPU())
	}
}

func TestSingle(t *testing.T) {
	if got := Single(nil); len(got.Nodes) != 0 || got.DefaultProcs()[0] != 1 {
		t.Errorf("Single(nil) = %v, DefaultProcs %v", got, got.DefaultProcs())
	}
	got := Single([]int{3, 1, 1, 2})
	if want := []Node{{-1, []int{1, 2, 3}}}; !reflect.DeepEqual(got.Nodes, want) {
		t.Errorf("Single = %v, want %v", got.Nodes, want)
	}
}

func TestDetect(t *testing.T) {
	topo := Detect()
	if topo.NumCPU() == 0 {
		t.Fatalf("Detect() = %v, no CPUs", topo)
	}
	if runtime.GOOS == "linux" && topo.NumCPU() != runtime.NumCPU() {
		// runtime.NumCPU is the affinity mask's size at start-up; Detect
		// reads the same mask.
		t.Logf("Detect has %d CPUs, runtime.NumCPU() = %d", topo.NumCPU(), runtime.NumCPU())
	}
}
