package linz

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// TestParseDumpRoundTrip dumps a history with every kind of operation and
// result that ParseDump reads, and reads it back unchanged.
func TestParseDumpRoundTrip(t *testing.T) {
	at := int64(0)
	op := func(client int, c Call, r Ret) porcupine.Operation {
		at += 2
		return porcupine.Operation{ClientId: client, Input: c, Call: at - 2, Output: r, Return: at + 1}
	}
	ops := []porcupine.Operation{
		op(0, Call{Kind: Send, V: 1}, Ret{Res: OK, Batch: Batch{Send: Pos{ID: 4, I: 1, N: 3}}}),
		op(1, Call{Kind: SendCtx, V: 2}, Ret{Res: Canceled}),
		op(2, Call{Kind: TrySend, V: 3}, Ret{Res: Full}),
		op(0, Call{Kind: Recv}, Ret{Res: OK, V: 1, Batch: Batch{Recv: Pos{ID: 9, I: 0, N: 2}}}),
		op(1, Call{Kind: RecvCtx}, Ret{Res: Canceled}),
		op(2, Call{Kind: TryRecv}, Ret{Res: Empty}),
		op(3, Call{Kind: Close}, Ret{Res: OK}),
		op(3, Call{Kind: Close}, Ret{Res: Closed}),
		op(4, Call{Kind: Len}, Ret{N: 7}),
		op(4, Call{Kind: Len}, Ret{N: LenAny}),
		op(0, Call{Kind: Select, V: 5}, Ret{Res: OK, Case: CaseSend}),
		op(0, Call{Kind: SelectCtx, V: 6}, Ret{Res: OK, V: 8, Case: CaseRecv}),
		op(1, Call{Kind: TrySelect, V: 7}, Ret{Res: Empty, Case: CaseNone}),
		op(1, Call{Kind: SelectTimeout, V: 8}, Ret{Res: TimedOut, Case: CaseNone}),
		op(2, Call{Kind: Select, V: 9}, Ret{Res: Closed, Case: CaseRecv}),
		op(2, Call{Kind: Recv}, Ret{Res: Closed}),
		op(2, Call{Kind: TryRecv}, Ret{Res: Other, Err: "boom"}),
	}
	text := "result: Unknown\nhistory (call order):\n" + Dump(ops)
	got, err := ParseDump(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ops) {
		t.Fatalf("read back:\n%s\nwant:\n%s", Dump(got), Dump(ops))
	}
	if _, err := ParseDump(strings.NewReader("client 1 Frob() → ok [1,2]\n")); err == nil {
		t.Fatal("an unknown operation was read without an error")
	}
}

// TestUndecidedWithoutLen checks the history kept in testdata/undecided,
// which Porcupine could not decide in 10 minutes, without its Len calls:
// linearizable, decided at once. So that the check is seen to be able to
// fail, the same history with a receive of a value nobody sent is
// illegal.
func TestUndecidedWithoutLen(t *testing.T) {
	f, err := os.Open("testdata/undecided/batch-cap1024-ring-gomaxprocs2-tagged.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, err := ParseDump(f)
	if err != nil {
		t.Fatal(err)
	}
	ops = DropLen(ops)
	if v := Check(1024, ops, time.Minute); v.Result != porcupine.Ok {
		t.Fatalf("without its Len calls: %v %s", v.Result, v.Problem)
	}
	bad := append([]porcupine.Operation(nil), ops...)
	for i, op := range bad {
		if r := op.Output.(Ret); op.Input.(Call).Kind.IsRecv() && r.Res == OK {
			r.V = -1 // a value nobody sent
			bad[i].Output = r
			break
		}
	}
	if v := Check(1024, bad, time.Minute); v.Result != porcupine.Illegal {
		t.Fatalf("with a receive of a value nobody sent: %v, want Illegal", v.Result)
	}
}
