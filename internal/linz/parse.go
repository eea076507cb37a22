package linz

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// dumpLine matches a line of Dump: client, kind, argument, result, the
// optional batch place, and the interval.
var dumpLine = regexp.MustCompile(`^client (\d+) (\w+)\((.*)\) → (.*?)(?: of (send|receive) batch #(\d+)\[(\d+)/(\d+)\])? \[(-?\d+),(-?\d+)\]$`)

// ParseDump reads back a history written by Dump, as the .txt report of a
// failed or undecided check holds it (Verdict.Write: the lines after
// "history (call order):"; a text with no such line is read whole), so
// that a history kept from a long run can be checked again: with another
// timeout, or without its Len calls (DropLen). Merged rendezvous pairs
// (Exchange) and operations in two batches at once are not read back.
func ParseDump(r io.Reader) ([]porcupine.Operation, error) {
	kinds := map[string]Kind{}
	for i, n := range kindNames {
		kinds[n] = Kind(i)
	}
	results := map[string]Res{}
	for i, n := range resNames {
		results[n] = Res(i)
	}
	res := func(s string) (Res, error) {
		if r, ok := results[s]; ok {
			return r, nil
		}
		return 0, fmt.Errorf("unknown result %q", s)
	}
	var lines []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if sc.Text() == "history (call order):" {
			lines = lines[:0]
			continue
		}
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var ops []porcupine.Operation
	for n, line := range lines {
		if !strings.HasPrefix(line, "client ") {
			continue
		}
		m := dumpLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: not an operation of Dump: %q", n+1, line)
		}
		k, ok := kinds[m[2]]
		if !ok {
			return nil, fmt.Errorf("line %d: operation %q cannot be read back", n+1, m[2])
		}
		c := Call{Kind: k}
		if m[3] != "" {
			v, err := strconv.Atoi(m[3])
			if err != nil {
				return nil, fmt.Errorf("line %d: argument %q: %v", n+1, m[3], err)
			}
			c.V = v
		}
		var r Ret
		var err error
		switch s := m[4]; {
		case k == Len:
			r.N, err = strconv.Atoi(s)
		case k.IsSelect() && s == "none":
			r.Case, r.Res = CaseNone, Empty
		case k.IsSelect() && strings.HasPrefix(s, "sent "):
			r.Case = CaseSend
			r.Res, err = res(strings.TrimPrefix(s, "sent "))
		case k.IsSelect() && strings.HasPrefix(s, "received "):
			r.Case = CaseRecv
			r.Res, r.V, err = recvResult(strings.TrimPrefix(s, "received "), res)
		case k.IsSelect():
			r.Case = CaseNone
			r.Res, err = res(s)
		case strings.HasPrefix(s, "error "):
			r.Res, r.Err = Other, strings.TrimPrefix(s, "error ")
		case k.IsRecv():
			r.Res, r.V, err = recvResult(s, res)
		default:
			r.Res, err = res(s)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n+1, err)
		}
		if m[5] != "" {
			id, _ := strconv.ParseInt(m[6], 10, 64)
			i, _ := strconv.Atoi(m[7])
			total, _ := strconv.Atoi(m[8])
			p := Pos{ID: id, I: i - 1, N: total}
			if m[5] == "send" {
				r.Batch.Send = p
			} else {
				r.Batch.Recv = p
			}
		}
		client, _ := strconv.Atoi(m[1])
		call, _ := strconv.ParseInt(m[9], 10, 64)
		ret, _ := strconv.ParseInt(m[10], 10, 64)
		ops = append(ops, porcupine.Operation{ClientId: client, Input: c, Call: call, Output: r, Return: ret})
	}
	return ops, nil
}

// recvResult reads a receive's result: a value (an int) or a Res.
func recvResult(s string, res func(string) (Res, error)) (Res, any, error) {
	if v, err := strconv.Atoi(s); err == nil {
		return OK, v, nil
	}
	r, err := res(s)
	return r, nil, err
}

// DropLen returns ops without their Len calls. A history that Check cannot
// decide in time often can be without them; what is left is then checked
// on its own, and the Len answers are not.
func DropLen(ops []porcupine.Operation) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Input.(Call).Kind != Len {
			out = append(out, op)
		}
	}
	return out
}
