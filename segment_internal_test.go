package chans

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSpreadIndex checks that spreadIndex is a permutation of a segment's
// cells for every cell size, and that consecutive indexes land at least 64
// bytes apart wherever a block of the layout (64 cells, fewer in a smaller
// segment) spans four lines or more.
func TestSpreadIndex(t *testing.T) {
	for size := uintptr(8); size <= 80; size += 4 { // 12, 20, ... on 32-bit platforms
		seen := make([]bool, segSize)
		for i := range segSize {
			p := spreadIndex(i, size)
			if p < 0 || p >= segSize || seen[p] {
				t.Fatalf("size %d: index %d maps to %d, outside the segment or taken", size, i, p)
			}
			seen[p] = true
			if i == 0 || min(segSize, 64)*int(size) < 4*64 {
				// In a block of fewer than four lines the last index of a
				// column and the first of the next are less than a line
				// apart (small-segment builds).
				continue
			}
			q := spreadIndex(i-1, size)
			if d := uintptr(max(p, q)-min(p, q)) * size; d < 64 {
				t.Errorf("size %d: indexes %d and %d are %d bytes apart", size, i-1, i, d)
			}
			// A producer and a consumer a multiple of 64 tickets apart
			// (a channel of capacity 64, 128, ...) must not write the
			// same lines.
			for j := i - 64; j >= 0; j -= 64 {
				q := spreadIndex(j, size)
				if d := uintptr(max(p, q)-min(p, q)) * size; d < 64 {
					t.Errorf("size %d: indexes %d and %d, %d apart, are %d bytes apart", size, j, i, i-j, d)
				}
			}
		}
	}
}

// TestCellSpread checks that the cells of one segment, as the channel uses
// them, are distinct and follow spreadIndex.
func TestCellSpread(t *testing.T) {
	var s segment[int]
	for i := range segSize {
		if got, want := s.cell(i), &s.cells[spreadIndex(i, 16)]; got != want {
			t.Fatalf("cell(%d) is not the cell spreadIndex places", i)
		}
	}
}

// TestSpreadIndexInlines checks that spreadIndex stays within the inliner's
// budget: every cell access calls it, and as a call (cost 83 once) it made
// a send+receive pair 8-17% slower. It asks the compiler, so it needs the go
// command; it skips without one.
func TestSpreadIndexInlines(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(gocmd, "build", "-o", os.DevNull, "-gcflags=-m=2", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m=2: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "can inline spreadIndex") {
		t.Errorf("spreadIndex is no longer inlined; the compiler said:\n%s", grepLines(string(out), "spreadIndex"))
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
