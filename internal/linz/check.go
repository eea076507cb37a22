package linz

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is the outcome of Check.
type Verdict struct {
	// Result is Ok, Illegal, or Unknown when the timeout ran out first.
	Result porcupine.CheckResult
	// Problem describes a violation found before Porcupine ran (the
	// rendezvous matching stage); Result is then Illegal.
	Problem string
	// Ops is the recorded history.
	Ops []porcupine.Operation
	// Checked is the history given to Porcupine (Ops, or for rendezvous
	// channels Ops with each exchange merged; with batch calls, intervals
	// narrowed, see NarrowBatches), and Model and Info what
	// Porcupine used and found; Info is empty when Problem is set.
	Checked []porcupine.Operation
	Model   porcupine.Model
	Info    porcupine.LinearizationInfo
}

// Check checks a history of a channel with capacity k: k >= 1, k < 0 for
// unbounded, or 0 for rendezvous. A zero timeout means none.
func Check(k int, ops []porcupine.Operation, timeout time.Duration) Verdict {
	v := Verdict{Ops: ops, Checked: ops}
	if k == 0 {
		merged, problem := CheckRendezvous(ops)
		v.Model = withBatches(RendezvousModel(), ops)
		if problem != "" {
			v.Result, v.Problem = porcupine.Illegal, problem
			return v
		}
		v.Checked = merged
	} else {
		v.Model, v.Checked = checkedBatches(Model(k), ops) // batch.go
	}
	v.Result, v.Info = porcupine.CheckOperationsVerbose(v.Model, v.Checked, timeout)
	return v
}

// Write saves the verdict under dir for a person to read: name.html, the
// Porcupine visualisation (when Porcupine ran), and name.txt, the problem
// and the history in call order. It returns the path of the file to open
// first.
func (v *Verdict) Write(dir, name string) (string, error) {
	txt := filepath.Join(dir, name+".txt")
	var b strings.Builder
	fmt.Fprintf(&b, "result: %v\n", v.Result)
	if v.Problem != "" {
		fmt.Fprintf(&b, "problem: %s\n", v.Problem)
	}
	if v.Problem == "" && v.Result == porcupine.Illegal {
		b.WriteString(v.Stuck())
	}
	b.WriteString("history (call order):\n")
	b.WriteString(Dump(v.Ops))
	if err := os.WriteFile(txt, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	if v.Problem != "" {
		return txt, nil
	}
	html := filepath.Join(dir, name+".html")
	if err := porcupine.VisualizePath(v.Model, v.Info, html); err != nil {
		return txt, err
	}
	return html, nil
}

// Dump renders a history one operation a line, in the order given.
func Dump(ops []porcupine.Operation) string {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString(DescribeOp(op))
		b.WriteByte('\n')
	}
	return b.String()
}

// Stuck explains an Illegal verdict from Porcupine: the longest prefix of a
// linearization that it found, the model state after it, and the calls that
// had to come next (those called before the earliest return among the calls
// left) with the reason none of them can.
func (v *Verdict) Stuck() string {
	var longest []porcupine.Operation
	for _, part := range v.Info.PartialLinearizationsOperations() {
		for _, lin := range part {
			if len(lin) > len(longest) {
				longest = lin
			}
		}
	}
	var b strings.Builder
	st := v.Model.Init()
	for _, op := range longest {
		_, st = v.Model.Step(st, op.Input, op.Output)
	}
	fmt.Fprintf(&b, "longest linearizable prefix: %d of %d operations; state after it: %s\n",
		len(longest), len(v.Checked), v.Model.DescribeState(st))
	done := make(map[[5]int64]bool, len(longest))
	key := func(op porcupine.Operation) [5]int64 {
		b := op.Output.(Ret).Batch // the values of a batch call share client and times
		return [5]int64{int64(op.ClientId), op.Call, op.Return, int64(b.Send.I), int64(b.Recv.I)}
	}
	for _, op := range longest {
		done[key(op)] = true
	}
	var left []porcupine.Operation
	minRet := int64(1<<63 - 1)
	for _, op := range v.Checked {
		if !done[key(op)] {
			left = append(left, op)
			minRet = min(minRet, op.Return)
		}
	}
	b.WriteString("none of these can come next:\n")
	for _, op := range left {
		if op.Call <= minRet {
			fmt.Fprintf(&b, "  %s\n", DescribeOp(op))
		}
	}
	n := min(len(longest), 8)
	b.WriteString("last steps of the prefix:\n")
	for _, op := range longest[len(longest)-n:] {
		fmt.Fprintf(&b, "  %s\n", DescribeOp(op))
	}
	return b.String()
}
