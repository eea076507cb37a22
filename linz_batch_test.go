package chans_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/linz"
)

// linzBatch makes one step in linzBatch of the kinds with a batch form
// (Send, SendContext, Recv, RecvContext, TryRecv) a batch call (SendMany,
// SendManyContext, RecvMany, RecvManyContext, TryRecvMany) in TestLinz's
// histories; CHANS_LINZ_BATCH sets it (0 leaves batches out).
// internal/linz/batch.go says how a batch is recorded and checked: one
// operation per value, in order within the batch.
var linzBatch = func() int {
	if s := os.Getenv("CHANS_LINZ_BATCH"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return n
		}
		panic("CHANS_LINZ_BATCH=" + s + ": want a count, 0 for no batches")
	}
	return 8 // about one step in ten; TestLinzBatch has more
}()

// TestLinzBatch checks random histories in which every step with a batch
// form is a batch call, for every kind: batches meet batches, on both sides,
// as well as single operations, selects (every other history), Close and
// cancellation. TestLinz mixes in fewer; CHANS_LINZ_N and CHANS_LINZ_SEED
// apply here too (a tenth of TestLinz's count by default).
func TestLinzBatch(t *testing.T) {
	n, base := linzHistories(t)
	n = max(n/10, 1)
	before := runtime.NumGoroutine()
	for _, k := range linzKinds {
		t.Run(linzKindName(k), func(t *testing.T) {
			values, unk, unkNoLen := 0, 0, 0
			for i := range n {
				seed := base + uint64(i)
				c := chans.New[int](k)
				cfg := linzConfig(seed)
				cfg.Batch = 1
				if linzSelects && seed%2 == 1 {
					cfg.Select = linzSelect(c)
				}
				h := linz.Run(cfg, linzErrs, linzChan{c}, linzOps(c))
				if err := chans.CheckInvariants(c); err != nil {
					t.Fatalf("seed %d: after the history: %v", seed, err)
				}
				for _, op := range h {
					if op.Output.(linz.Ret).Batch != (linz.Batch{}) {
						values++
					}
				}
				v := linz.Check(k, h, linzCheckTimeout)
				switch v.Result {
				case porcupine.Illegal:
					path, err := v.Write(linzReportDir(t), "linz-batch-"+linzKindName(k)+"-seed"+strconv.FormatUint(seed, 10))
					if err != nil {
						t.Errorf("writing report: %v", err)
					}
					t.Fatalf("seed %d (%d clients): history of %d operations is not linearizable: %s\nreport: %s",
						seed, cfg.Clients, len(h), problemOr(v.Problem, "no linearization exists"), path)
				case porcupine.Unknown:
					if linzUnknown(t, &v, k, "linz-batch-"+linzKindName(k), seed) {
						unkNoLen++
					}
					unk++
				}
			}
			t.Logf("%d histories, %d operations of batch calls, %d unknown (timed out; %d of them linearizable without their Len calls)", n, values, unk, unkNoLen)
		})
	}
	linzWaitGoroutines(t, before)
}
