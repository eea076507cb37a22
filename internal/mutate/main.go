// Command mutate is mutation testing for the cell protocol: it breaks each
// protocol rule in turn (mutants.go), on a copy of the module, and reports
// which test catches it.
//
// Usage, from anywhere in the repository:
//
//	go run ./internal/mutate [-run REGEXP] [-o FILE] [-rev REV] [-logs DIR] [-keep]
//
// The tool first takes one snapshot of the module: the files git tracks, as
// they are in the working tree (so uncommitted edits count), with the
// untracked files git does not ignore (a new file an edited one needs); or,
// with -rev, the tree of that commit (git archive), which does not move
// while others edit. Every mutant runs on a copy of that snapshot. For each
// mutant whose ID matches -run, the mutant's Find is replaced by its Replace
// in a fresh copy (the tool stops, before running anything, if Find does not
// occur exactly once in the snapshot), and these run in the copy, niced,
// one after the other:
//
//	a) go test -count=1 -short -timeout 180s .
//	b) go test -count=1 -short -timeout 300s -tags chans_smallseg,chans_perturb .
//	c) b again with GOMAXPROCS=4: past 2 Ps a waiting operation blocks
//	   without yielding first (Chan.yield), which a and b never do on a
//	   2-core machine
//
// all with CHANS_BACKEND=cells, so that buffered channels use the cells
// at any GOMAXPROCS.
//
// A mutant is killed by the first command that fails, and survives if all
// pass. The unmutated tree runs first in the same way (the baseline); if it
// fails, nothing else runs. The result is a markdown table on stdout, and in
// FILE with -o. The working tree itself is never modified.
package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// A step is one command run in the mutated copy.
type step struct {
	name    string        // short, for the table
	args    []string      // after "nice -n 10 go"
	env     []string      // added to the tool's environment
	timeout time.Duration // the tool's own limit, past go test's -timeout
}

var perturbed = []string{"test", "-count=1", "-short", "-timeout", "300s", "-tags", "chans_smallseg,chans_perturb", "."}

// cells makes every channel the tests make use the cells (without it,
// buffered channels made at GOMAXPROCS 1 use a ring, which the cell
// protocol's mutants do not touch). A tree from before the ring ignores it.
var cells = "CHANS_BACKEND=cells"

var steps = []step{
	{"short", []string{"test", "-count=1", "-short", "-timeout", "180s", "."}, []string{cells}, 180*time.Second + 3*time.Minute},
	{"smallseg+perturb", perturbed, []string{cells}, 300*time.Second + 3*time.Minute},
	{"smallseg+perturb, GOMAXPROCS=4", perturbed, []string{cells, "GOMAXPROCS=4"}, 300*time.Second + 3*time.Minute},
}

// result is what running the steps on one tree gave.
type result struct {
	killed   bool
	step     string // the step that failed
	caughtBy string // failing tests, or why
	took     time.Duration
	log      []byte // the failing step's output, or the last step's
}

func main() {
	run := flag.String("run", "", "run only the mutants whose ID matches this regular expression")
	out := flag.String("o", "", "also write the markdown report to this file")
	logs := flag.String("logs", "", "write each mutant's test output to DIR/ID.log")
	keep := flag.Bool("keep", false, "keep the temporary copies")
	baseline := flag.Bool("baseline", true, "run the unmutated tree first and stop if it fails")
	list := flag.Bool("list", false, "list the selected mutants and exit")
	rev := flag.String("rev", "", "test this commit's tree (git archive) instead of the working tree")
	flag.Parse()

	// An interrupt stops the running step and removes the temporary copies.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := mainErr(ctx, *run, *out, *rev, *logs, *keep, *baseline, *list)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(2)
	}
}

func mainErr(ctx context.Context, runRE, outFile, rev, logDir string, keep, baseline, list bool) error {
	re, err := regexp.Compile(runRE)
	if err != nil {
		return err
	}
	var sel []Mutant
	for _, m := range mutants {
		if re.MatchString(m.ID) {
			sel = append(sel, m)
		}
	}
	if len(sel) == 0 {
		return fmt.Errorf("no mutant matches %q", runRE)
	}
	if list {
		for _, m := range sel {
			fmt.Printf("%-30s %-35s %s\n", m.ID, m.Rule, m.What)
		}
		return nil
	}

	root, err := gitOut(".", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	header, err := describeTree(root, rev, os.Args[1:])
	if err != nil {
		return err
	}
	snap, err := os.MkdirTemp("", "chans-mutate-snapshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(snap)
	if rev != "" {
		err = archiveTree(root, rev, snap)
	} else {
		err = copyWorkTree(root, snap)
	}
	if err != nil {
		return err
	}
	// Every selected mutant must apply before anything runs.
	for _, m := range sel {
		src, err := os.ReadFile(filepath.Join(snap, m.File))
		if err != nil {
			return fmt.Errorf("mutant %s: %v", m.ID, err)
		}
		if _, err := apply(string(src), m); err != nil {
			return err
		}
	}
	if logDir != "" {
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			return err
		}
	}

	start := time.Now()
	fmt.Print(header)

	if baseline {
		fmt.Fprintln(os.Stderr, "mutate: baseline (unmutated tree)")
		r, err := runMutant(ctx, snap, nil, keep)
		if err != nil {
			return err
		}
		saveLog(logDir, "baseline", r)
		if r.killed {
			os.Stderr.Write(r.log)
			return fmt.Errorf("the unmutated tree fails (%s: %s): fix that first", r.step, r.caughtBy)
		}
		fmt.Fprintf(os.Stderr, "mutate: baseline passes (%s)\n", r.took.Round(time.Second))
	}

	var table strings.Builder
	table.WriteString("| ID | rule | what it breaks | result | caught by |\n")
	table.WriteString("|---|---|---|---|---|\n")
	fmt.Print("\n" + table.String())
	killed := 0
	for _, m := range sel {
		fmt.Fprintf(os.Stderr, "mutate: %s ...\n", m.ID)
		r, err := runMutant(ctx, snap, &m, keep)
		if err != nil {
			return err
		}
		saveLog(logDir, m.ID, r)
		res, by := "survived", "—"
		if r.killed {
			killed++
			res, by = "killed", fmt.Sprintf("%s (%s)", r.caughtBy, r.step)
		}
		row := fmt.Sprintf("| %s | %s | %s | %s | %s |\n", m.ID, m.Rule, cell(m.What), res, cell(by))
		table.WriteString(row)
		fmt.Print(row)
		fmt.Fprintf(os.Stderr, "mutate: %s %s in %s\n", m.ID, res, r.took.Round(time.Second))
	}
	footer := fmt.Sprintf("\n%d of %d mutants killed; total run time %s.\n", killed, len(sel), time.Since(start).Round(time.Second))
	fmt.Print(footer)

	if outFile != "" {
		return os.WriteFile(outFile, []byte(header+"\n"+table.String()+footer), 0o644)
	}
	return nil
}

// describeTree says what the run runs on: the command, the commit, and for
// the working tree the uncommitted changes and untracked files it includes.
func describeTree(root, rev string, args []string) (string, error) {
	var b strings.Builder
	cmd := "go run ./internal/mutate"
	if len(args) > 0 {
		cmd += " " + strings.Join(args, " ")
	}
	fmt.Fprintf(&b, "Command: `%s`\n\n", cmd)
	if rev != "" {
		commit, err := gitOut(root, "rev-parse", "--verify", rev+"^{commit}")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "Commit: %s (its tree, from git archive)", commit)
	} else {
		commit, err := gitOut(root, "rev-parse", "HEAD")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "Commit: %s (the working tree)", commit)
		if dirty, err := gitOut(root, "diff", "--name-only", "HEAD"); err == nil && dirty != "" {
			fmt.Fprintf(&b, ", with uncommitted changes to %s", strings.Join(strings.Fields(dirty), ", "))
		}
		if extra, err := gitOut(root, "ls-files", "--others", "--exclude-standard"); err == nil && extra != "" {
			fmt.Fprintf(&b, ", and untracked %s", strings.Join(strings.Fields(extra), ", "))
		}
	}
	fmt.Fprintf(&b, "\n\nGo: %s, %s/%s, %d CPUs; started %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	return b.String(), nil
}

// cell escapes s for a markdown table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func saveLog(dir, id string, r result) {
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, id+".log"), r.log, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
	}
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// copyWorkTree copies into dir the files git tracks under root, as they are
// in the working tree (a tracked file deleted there is skipped), and the
// untracked files git does not ignore.
func copyWorkTree(root, dir string) error {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return copyFiles(root, dir, files)
}

// archiveTree writes the tree of commit rev into dir.
func archiveTree(root, rev, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", rev)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	tr := tar.NewReader(pipe)
	var terr error
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			terr = err
			break
		}
		name := filepath.FromSlash(h.Name)
		if !filepath.IsLocal(name) {
			terr = fmt.Errorf("git archive: unexpected path %q", h.Name)
			break
		}
		dst := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			terr = os.MkdirAll(dst, 0o755)
		case tar.TypeSymlink:
			if terr = os.MkdirAll(filepath.Dir(dst), 0o755); terr == nil {
				terr = os.Symlink(h.Linkname, dst)
			}
		case tar.TypeReg:
			if terr = os.MkdirAll(filepath.Dir(dst), 0o755); terr == nil {
				terr = writeFrom(dst, tr, os.FileMode(h.Mode).Perm())
			}
		}
		if terr != nil {
			break
		}
	}
	if terr != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return terr
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git archive %s: %v: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// apply returns src with m.Find replaced by m.Replace, or an error unless
// m.Find occurs exactly once.
func apply(src string, m Mutant) (string, error) {
	if m.Find == "" {
		return "", fmt.Errorf("mutant %s: empty Find", m.ID)
	}
	if n := strings.Count(src, m.Find); n != 1 {
		return "", fmt.Errorf("mutant %s: Find occurs %d times in %s, want exactly once: %q", m.ID, n, m.File, m.Find)
	}
	return strings.Replace(src, m.Find, m.Replace, 1), nil
}

// copyFiles copies the files (paths relative to root) from root into dir; a
// file that does not exist is skipped.
func copyFiles(root, dir string, files []string) error {
	for _, f := range files {
		src := filepath.Join(root, f)
		fi, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, dst); err != nil {
				return err
			}
		case fi.Mode().IsRegular():
			if err := copyFile(src, dst, fi.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyDir copies every file under src into dir.
func copyDir(src, dir string) error {
	var files []string
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(src, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return copyFiles(src, dir, files)
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeFrom(dst, in, perm)
}

func writeFrom(dst string, r io.Reader, perm os.FileMode) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// runMutant copies the snapshot, applies m (nil: the baseline) and runs the
// steps until one fails.
func runMutant(ctx context.Context, snap string, m *Mutant, keep bool) (result, error) {
	name := "baseline"
	if m != nil {
		name = m.ID
	}
	dir, err := os.MkdirTemp("", "chans-mutant-"+name+"-")
	if err != nil {
		return result{}, err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "mutate: copy kept in", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	if err := copyDir(snap, dir); err != nil {
		return result{}, err
	}
	if m != nil {
		path := filepath.Join(dir, m.File)
		src, err := os.ReadFile(path)
		if err != nil {
			return result{}, err
		}
		mutated, err := apply(string(src), *m)
		if err != nil {
			return result{}, err
		}
		if err := os.WriteFile(path, []byte(mutated), 0o644); err != nil {
			return result{}, err
		}
	}

	var r result
	start := time.Now()
	for _, s := range steps {
		output, timedOut, err := runStep(ctx, dir, s)
		if ctx.Err() != nil {
			return result{}, ctx.Err()
		}
		r.log = output
		if err == nil {
			continue
		}
		r.killed, r.step = true, s.name
		r.caughtBy = diagnose(output, timedOut)
		r.took = time.Since(start)
		return r, nil
	}
	r.took = time.Since(start)
	return r, nil
}

// runStep runs one step in dir, niced, and returns its combined output.
// timedOut reports that the tool's own limit killed it. (go test shows a
// package's output only when its test binary exits, so a failure cannot be
// seen, and the step stopped, before then.)
func runStep(parent context.Context, dir string, s step) (output []byte, timedOut bool, err error) {
	ctx, cancel := context.WithTimeout(parent, s.timeout)
	defer cancel()
	args := append([]string{"-n", "10", "go"}, s.args...)
	cmd := exec.CommandContext(ctx, "nice", args...)
	cmd.Dir = dir
	if len(s.env) > 0 {
		cmd.Env = append(os.Environ(), s.env...)
	}
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	killGroup(cmd) // so that the test binary goes too on a timeout
	err = cmd.Run()
	return buf.Bytes(), ctx.Err() == context.DeadlineExceeded, err
}

var (
	failLine    = regexp.MustCompile(`^--- FAIL: (\S+)`)
	runningLine = regexp.MustCompile(`^\s+(Test\S+|Fuzz\S+|Example\S+) \(`)
)

// diagnose names what failed, from a failing step's output: the top-level
// tests that failed (at most three), or a build failure, a hang, a panic
// outside any test, or a leak found by TestMain.
func diagnose(output []byte, timedOut bool) string {
	var failed, running []string
	seen := map[string]bool{}
	timeout, inRunning, buildFailed := false, false, false
	var panicMsg string
	sc := bufio.NewScanner(bytes.NewReader(output))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := failLine.FindStringSubmatch(line); m != nil {
			name := m[1]
			if i := strings.IndexByte(name, '/'); i >= 0 {
				name = name[:i]
			}
			if !seen[name] {
				seen[name] = true
				failed = append(failed, name)
			}
		}
		switch {
		case strings.HasPrefix(line, "panic: test timed out"):
			timeout = true
		case strings.TrimSpace(line) == "running tests:":
			inRunning = true
			continue
		case strings.HasPrefix(line, "panic: ") && panicMsg == "":
			panicMsg = strings.TrimPrefix(line, "panic: ")
		case strings.Contains(line, "[build failed]") || strings.Contains(line, "[setup failed]"):
			buildFailed = true
		}
		if inRunning {
			if m := runningLine.FindStringSubmatch(line); m != nil {
				name := m[1]
				if i := strings.IndexByte(name, '/'); i >= 0 {
					name = name[:i]
				}
				if !contains(running, name) {
					running = append(running, name)
				}
			} else {
				inRunning = false
			}
		}
	}
	short := func(names []string) string {
		if len(names) > 3 {
			names = names[:3]
		}
		return strings.Join(names, ", ")
	}
	switch {
	case buildFailed:
		return "build failed"
	case timeout || timedOut:
		hung := "timeout: hung"
		if len(running) > 0 {
			hung += " in " + short(running)
		}
		if len(failed) > 0 {
			return short(failed) + " (then " + hung + ")"
		}
		return hung
	case len(failed) > 0:
		return short(failed)
	case panicMsg != "":
		if len(panicMsg) > 60 {
			panicMsg = panicMsg[:60] + "…"
		}
		return "panic: " + panicMsg
	case bytes.Contains(output, []byte("goleak")):
		return "goleak (TestMain)"
	}
	return "failed (no test named)"
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
