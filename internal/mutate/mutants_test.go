package main

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, seen from this package's directory.
const root = "../.."

var idRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// TestMutantsApply checks the mutant list against the current tree, so that
// it cannot rot silently when the protocol code changes: every Find occurs
// exactly once in its file, and the mutated package still type-checks (a
// mutant that does not build would be "killed" by the compiler). Under the
// race detector it checks that every mutant applies and parses, and leaves
// the type-checks (about 30 seconds there, 5 without it) to a run without
// -race, which CI makes.
func TestMutantsApply(t *testing.T) {
	pkg, err := build.ImportDir(root, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(root, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	check := func(fs map[string]*ast.File) error {
		var list []*ast.File
		for _, name := range pkg.GoFiles {
			list = append(list, fs[name])
		}
		_, err := conf.Check(pkg.ImportPath, fset, list, nil)
		return err
	}
	if raceEnabled {
		t.Log("-race: mutants are applied and parsed, not type-checked")
	} else if err := check(files); err != nil {
		t.Fatalf("the unmutated package does not type-check: %v", err)
	}

	for _, m := range mutants {
		src, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		mutated, err := apply(string(src), m)
		if err != nil {
			t.Error(err)
			continue
		}
		if mutated == string(src) {
			t.Errorf("%s: the replacement changes nothing", m.ID)
		}
		f, err := parser.ParseFile(fset, m.File, mutated, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: the mutated %s does not parse: %v", m.ID, m.File, err)
			continue
		}
		if _, ok := files[m.File]; !ok || raceEnabled {
			continue // a file of another build, or -race: parsing is all we check
		}
		mfiles := map[string]*ast.File{}
		for name, f := range files {
			mfiles[name] = f
		}
		mfiles[m.File] = f
		if err := check(mfiles); err != nil {
			t.Errorf("%s: the mutated package does not type-check: %v", m.ID, err)
		}
	}
}

// TestMutantsWellFormed checks that IDs are unique and short, and that every
// mutant names its rule, its file and what it breaks.
func TestMutantsWellFormed(t *testing.T) {
	if len(mutants) == 0 {
		t.Fatal("no mutants")
	}
	seen := map[string]bool{}
	for i, m := range mutants {
		if !idRE.MatchString(m.ID) || len(m.ID) > 32 {
			t.Errorf("mutant %d: ID %q is not short lower-case words joined by '-'", i, m.ID)
		}
		if seen[m.ID] {
			t.Errorf("mutant ID %q is used twice", m.ID)
		}
		seen[m.ID] = true
		if m.Rule == "" || m.File == "" || m.What == "" {
			t.Errorf("%s: Rule, File and What must be set", m.ID)
		}
		if strings.Contains(m.What, "\n") {
			t.Errorf("%s: What must be one line", m.ID)
		}
		if m.Find == m.Replace {
			t.Errorf("%s: Replace equals Find", m.ID)
		}
	}
}

// TestDiagnose checks how a failing step's output is named in the table.
func TestDiagnose(t *testing.T) {
	for _, c := range []struct {
		out     string
		timeout bool
		want    string
	}{
		{"--- FAIL: TestA (0.01s)\n    --- FAIL: TestA/sub (0.00s)\n--- FAIL: TestB (0.1s)\nFAIL\n", false, "TestA, TestB"},
		{"--- FAIL: TestA\n--- FAIL: TestB\n--- FAIL: TestC\n--- FAIL: TestD\n", false, "TestA, TestB, TestC"},
		{"# github.com/x\n./a.go:1: undefined: y\nFAIL\tgithub.com/x [build failed]\n", false, "build failed"},
		{"panic: test timed out after 3m0s\n\trunning tests:\n\t\tTestHang (3m0s)\n\t\tTestHang/sub (3m0s)\n\ngoroutine 1\n", false, "timeout: hung in TestHang"},
		{"", true, "timeout: hung"},
		{"--- FAIL: TestA (0.00s)\npanic: test timed out after 3m0s\n\trunning tests:\n\t\tTestLinz (3m0s)\n", false, "TestA (then timeout: hung in TestLinz)"},
		{"panic: chans: corrupt cell state in send\n\ngoroutine 7\n", false, "panic: chans: corrupt cell state in send"},
	} {
		if got := diagnose([]byte(c.out), c.timeout); got != c.want {
			t.Errorf("diagnose(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}
