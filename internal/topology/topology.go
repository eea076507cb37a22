// Package topology reads which CPUs a machine has online and how they group
// into NUMA domains, and orders CPUs so that a sweep fills one domain before
// it crosses into the next.
//
// On Linux the domains come from sysfs (node*/cpulist under
// devices/system/node, intersected with devices/system/cpu/online); elsewhere,
// or when sysfs says nothing, the machine is one domain. A Topology is a plain
// value: the zero value has no CPUs, and copies share nothing that is mutated.
package topology

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// A Node is one NUMA domain and the online CPUs in it, in ascending order.
// ID is the kernel's node number, or -1 for the catch-all domain that holds
// online CPUs no node claims (and for the single domain of a machine whose
// topology is unknown).
type Node struct {
	ID   int
	CPUs []int
}

// A Topology is the machine's online CPUs grouped into NUMA domains.
// Nodes are in ascending ID order with the catch-all domain (ID -1), if
// any, last; no CPU is in two nodes and no node is empty.
type Topology struct {
	Nodes []Node
}

// Single returns a topology of one domain holding cpus.
func Single(cpus []int) Topology {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	if len(c) == 0 {
		return Topology{}
	}
	return Topology{Nodes: []Node{{ID: -1, CPUs: c}}}
}

// Read reads the topology from the sysfs tree rooted at sysfs (normally
// "/sys"; tests pass a fixture tree).
//
// Online CPUs come from devices/system/cpu/online. If that file is missing,
// the CPUs listed by the nodes are taken to be online; if both are missing,
// Read fails with an error wrapping fs.ErrNotExist, and callers should fall
// back to Single. Offline CPUs are dropped from every node, nodes left with
// no online CPUs (memory-only nodes) are dropped, and online CPUs that no
// node lists go into a final domain with ID -1.
func Read(sysfs string) (Topology, error) {
	online, onlineErr := readCPUList(filepath.Join(sysfs, "devices/system/cpu/online"))
	if onlineErr != nil && !errors.Is(onlineErr, os.ErrNotExist) {
		return Topology{}, onlineErr
	}
	nodes, err := readNodes(filepath.Join(sysfs, "devices/system/node"))
	if err != nil {
		return Topology{}, err
	}
	if onlineErr != nil {
		if len(nodes) == 0 {
			return Topology{}, onlineErr
		}
		for _, n := range nodes {
			online = append(online, n.CPUs...)
		}
		slices.Sort(online)
		online = slices.Compact(online)
	}
	if len(nodes) == 0 {
		return Single(online), nil
	}
	return build(nodes, online), nil
}

// build intersects nodes with the online set and collects the leftovers.
func build(nodes []Node, online []int) Topology {
	isOnline := make(map[int]bool, len(online))
	for _, c := range online {
		isOnline[c] = true
	}
	claimed := make(map[int]bool, len(online))
	var t Topology
	for _, n := range nodes {
		var cpus []int
		for _, c := range n.CPUs {
			if isOnline[c] && !claimed[c] {
				claimed[c] = true
				cpus = append(cpus, c)
			}
		}
		if len(cpus) > 0 {
			t.Nodes = append(t.Nodes, Node{ID: n.ID, CPUs: cpus})
		}
	}
	var rest []int
	for _, c := range online {
		if !claimed[c] {
			rest = append(rest, c)
		}
	}
	if len(rest) > 0 {
		t.Nodes = append(t.Nodes, Node{ID: -1, CPUs: rest})
	}
	return t
}

// readNodes reads dir/node<N>/cpulist for every node directory. A missing dir
// yields no nodes and no error.
func readNodes(dir string) ([]Node, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var nodes []Node
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "node") {
			continue
		}
		id, err := strconv.Atoi(name[len("node"):])
		if err != nil || id < 0 {
			continue // "node_..." attribute files, not nodes
		}
		cpus, err := readCPUList(filepath.Join(dir, name, "cpulist"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, Node{ID: id, CPUs: cpus})
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].ID < nodes[j].ID })
	return nodes, nil
}

func readCPUList(path string) ([]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cpus, err := ParseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cpus, nil
}

// maxCPU bounds the CPU numbers ParseCPUList accepts, so that a corrupt
// range cannot allocate without limit. Linux's NR_CPUS tops out at 8192.
const maxCPU = 1 << 16

// ParseCPUList parses a Linux CPU list such as "0-3,8-11" or "0,2,5-6\n"
// into ascending, duplicate-free CPU numbers. An empty list (a node with no
// CPUs) yields none.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("bad cpu list %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("bad cpu list %q: %v", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("bad cpu list %q: range %s is backwards", s, part)
			}
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= maxCPU {
		return 0, fmt.Errorf("bad cpu number %q", s)
	}
	return n, nil
}

// FormatCPUList is the inverse of ParseCPUList: it writes cpus (which need
// not be sorted) with runs collapsed into ranges, as in "0-3,8-11".
func FormatCPUList(cpus []int) string {
	c := slices.Clone(cpus)
	slices.Sort(c)
	c = slices.Compact(c)
	var b strings.Builder
	for i := 0; i < len(c); {
		j := i
		for j+1 < len(c) && c[j+1] == c[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j == i {
			fmt.Fprintf(&b, "%d", c[i])
		} else {
			fmt.Fprintf(&b, "%d-%d", c[i], c[j])
		}
		i = j + 1
	}
	return b.String()
}

// Restrict returns t with only the CPUs in allowed (the process's affinity
// mask, say), dropping nodes left empty. A nil allowed means no restriction.
func (t Topology) Restrict(allowed []int) Topology {
	if allowed == nil {
		return t
	}
	ok := make(map[int]bool, len(allowed))
	for _, c := range allowed {
		ok[c] = true
	}
	var r Topology
	for _, n := range t.Nodes {
		var cpus []int
		for _, c := range n.CPUs {
			if ok[c] {
				cpus = append(cpus, c)
			}
		}
		if len(cpus) > 0 {
			r.Nodes = append(r.Nodes, Node{ID: n.ID, CPUs: cpus})
		}
	}
	return r
}

// NumCPU returns the number of CPUs in t.
func (t Topology) NumCPU() int {
	n := 0
	for _, nd := range t.Nodes {
		n += len(nd.CPUs)
	}
	return n
}

// Order returns every CPU in t, domain by domain: all of the first node's
// CPUs, then all of the second's, and so on. A sweep that takes the first p
// CPUs of Order fills one domain before it crosses into the next.
func (t Topology) Order() []int {
	var cpus []int
	for _, n := range t.Nodes {
		cpus = append(cpus, n.CPUs...)
	}
	return cpus
}

// CPUs returns the first p CPUs of Order, or all of them if p exceeds NumCPU.
func (t Topology) CPUs(p int) []int {
	o := t.Order()
	return o[:min(max(p, 0), len(o))]
}

// Domains returns how many domains the first p CPUs of Order span (at least
// one, even for p <= 0 or an empty topology, since a process always runs
// somewhere).
func (t Topology) Domains(p int) int {
	d := 0
	for _, n := range t.Nodes {
		if p <= 0 {
			break
		}
		d++
		p -= len(n.CPUs)
	}
	return max(d, 1)
}

// Boundaries returns the cumulative domain sizes: the p at which each domain
// but the last is exactly full. A sweep that includes them shows the last
// point before each crossing.
func (t Topology) Boundaries() []int {
	var b []int
	sum := 0
	for i, n := range t.Nodes {
		sum += len(n.CPUs)
		if i < len(t.Nodes)-1 {
			b = append(b, sum)
		}
	}
	return b
}

// DefaultProcs returns the default GOMAXPROCS sweep for t: 1, 2, 4, ... up
// to the number of CPUs, the number of CPUs itself, and every domain
// boundary, ascending and without duplicates.
func (t Topology) DefaultProcs() []int {
	n := max(t.NumCPU(), 1)
	var ps []int
	for p := 1; p < n; p *= 2 {
		ps = append(ps, p)
	}
	ps = append(ps, n)
	ps = append(ps, t.Boundaries()...)
	slices.Sort(ps)
	return slices.Compact(ps)
}

// Crossings reports, for each p in procs (which must be ascending), whether
// it is the first point that spans more domains than the points before it.
func (t Topology) Crossings(procs []int) []bool {
	cross := make([]bool, len(procs))
	prev := 0
	for i, p := range procs {
		d := t.Domains(p)
		if i > 0 && d > prev {
			cross[i] = true
		}
		prev = max(prev, d)
	}
	return cross
}

// String describes t on one line, as in "2 NUMA nodes: node0 cpus 0-3,
// node1 cpus 4-7" (a domain with ID -1 is written without a node name).
func (t Topology) String() string {
	if len(t.Nodes) == 0 {
		return "no CPUs"
	}
	var parts []string
	for _, n := range t.Nodes {
		cpus := "cpus " + FormatCPUList(n.CPUs)
		if n.ID >= 0 {
			cpus = fmt.Sprintf("node%d %s", n.ID, cpus)
		}
		parts = append(parts, cpus)
	}
	s := "1 NUMA node"
	if len(t.Nodes) > 1 {
		s = fmt.Sprintf("%d NUMA nodes", len(t.Nodes))
	}
	return s + ": " + strings.Join(parts, ", ")
}

// seq returns 0..n-1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
