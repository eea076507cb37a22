package chans_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/scalable-go/chans"
	"github.com/scalable-go/chans/internal/linz"
	"github.com/scalable-go/chans/internal/sched"
)

// linzSelectTimeout runs a select over sending v on c, receiving from c,
// and a timeout of d or, if done is not nil, the closing of done. Every
// other call goes through a Selector built for the call with OnSendPtr, the
// rest through Select; both reuse the timers of earlier calls.
func linzSelectTimeout(c *chans.Chan[int]) linz.TimeoutSelectFunc[int] {
	return func(v int, d time.Duration, done <-chan struct{}) (which, got int, ok bool, err error) {
		var sendErr error
		third := chans.OnTimeout(d, nil)
		if done != nil {
			third = chans.OnDone(done, nil)
		}
		recv := chans.OnRecv(c, func(x int, y bool) { got, ok = x, y })
		var j int
		if v%2 == 0 {
			j = chans.Select(chans.OnSend(c, v, func(e error) { sendErr = e }), recv, third)
		} else {
			x := v
			j = chans.NewSelector(chans.OnSendPtr(c, &x, func(e error) { sendErr = e }), recv, third).Select()
		}
		switch j {
		case 0:
			return linz.CaseSend, 0, false, sendErr
		case 1:
			return linz.CaseRecv, got, ok, nil
		}
		return linz.CaseNone, 0, false, nil
	}
}

// TestLinzSelectTimeout checks random concurrent histories of every kind in
// which some selects carry a third case that fires on its own, a timeout
// or a done channel closed before or during the call; its firing is
// recorded as the select returning no value, which the models allow in any
// state but only with no effect on the channel. Half the histories also
// have the plain selects of TestLinz. The number of histories per kind is a
// fifth of TestLinz's (CHANS_LINZ_N, CHANS_LINZ_LONG, -short).
func TestLinzSelectTimeout(t *testing.T) {
	n, base := linzHistories(t)
	n = max(1, n/5)
	t.Logf("%d histories per kind, base seed %d (CHANS_LINZ_SEED), perturbation %v", n, base, sched.Enabled)
	for _, k := range linzKinds {
		t.Run(linzKindName(k), func(t *testing.T) {
			var timedOut, committed, unknown int
			for i := range n {
				seed := base + uint64(i)
				c := chans.New[int](k)
				cfg := linzConfig(seed)
				cfg.SelectTimeout = linzSelectTimeout(c)
				if seed%2 == 1 {
					cfg.Select = linzSelect(c)
				}
				h := linz.Run(cfg, linzErrs, linzChan{c}, linzOps(c))
				if err := chans.CheckInvariants(c); err != nil {
					t.Fatalf("seed %d: after the history: %v", seed, err)
				}
				for _, op := range h {
					if op.Input.(linz.Call).Kind != linz.SelectTimeout {
						continue
					}
					if op.Output.(linz.Ret).Res == linz.TimedOut {
						timedOut++
					} else {
						committed++
					}
				}
				v := linz.Check(k, h, linzCheckTimeout)
				switch v.Result {
				case porcupine.Illegal:
					path, err := v.Write(linzReportDir(t), fmt.Sprintf("linz-timeout-%s-seed%d", linzKindName(k), seed))
					if err != nil {
						t.Errorf("writing report: %v", err)
					}
					t.Fatalf("seed %d (%d clients): history of %d operations is not linearizable: %s\nreport: %s",
						seed, cfg.Clients, len(h), problemOr(v.Problem, "no linearization exists"), path)
				case porcupine.Unknown:
					unknown++
				}
			}
			t.Logf("%d histories: %d selects with a timeout or done case fired it, %d committed a value or closed; %d unknown (timed out)", n, timedOut, committed, unknown)
			if timedOut == 0 || committed == 0 {
				t.Errorf("the histories did not exercise both outcomes: %d timed out, %d committed", timedOut, committed)
			}
		})
	}
}
