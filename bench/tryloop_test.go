package bench

import "testing"

// BenchmarkTryRecvLoop: P producers send b.N values through a channel of 64
// or 1024 slots to P consumers that poll it, each taking what TryRecv gives
// and blocking in Recv only when TryRecv finds the channel empty (native:
// a select with a default case, then a receive). impl=chans-handle polls
// through a Handle per consumer.
func BenchmarkTryRecvLoop(b *testing.B) {
	for _, c := range []int{64, 1024} {
		runImpls(b, "", sub("/cap=%d/g=P", c), impls, func(b *testing.B, im Impl) {
			prodConsTry(b, im, c, procs(), procs(), 0, false, true)
		})
	}
}

// BenchmarkTrySendLoop is BenchmarkTryRecvLoop with the roles turned: the
// producers try (TrySend, blocking in Send only when it finds no room), the
// consumers receive.
func BenchmarkTrySendLoop(b *testing.B) {
	for _, c := range []int{64, 1024} {
		runImpls(b, "", sub("/cap=%d/g=P", c), impls, func(b *testing.B, im Impl) {
			prodConsTry(b, im, c, procs(), procs(), 0, true, false)
		})
	}
}
