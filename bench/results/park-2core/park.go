package parkbench

import (
	"sync/atomic"
	"unsafe"
)

//go:linkname gopark runtime.gopark
func gopark(unlockf func(uintptr, unsafe.Pointer) bool, lock unsafe.Pointer, reason uint8, traceReason uint8, traceskip int)

//go:linkname goready runtime.goready
func goready(gp uintptr, traceskip int)

const (
	awake = iota
	woken
)

// Parker: state is awake, woken, or a g pointer (parked).
type Parker struct {
	st atomic.Uintptr
}

//go:nosplit
//go:norace
func commit(gp uintptr, p unsafe.Pointer) bool {
	return (*Parker)(p).st.CompareAndSwap(awake, gp)
}

func (p *Parker) Park() {
	if p.st.Load() == awake {
		gopark(commit, unsafe.Pointer(p), 0, 0, 1)
	}
	p.st.Store(awake)
}

func (p *Parker) Wake() {
	old := p.st.Swap(woken)
	if old != awake && old != woken {
		goready(old, 1)
	}
}

type ChanParker struct {
	sleep atomic.Uint32
	ch    chan struct{}
}

func NewChanParker() *ChanParker { return &ChanParker{ch: make(chan struct{}, 1)} }
func (p *ChanParker) Park() {
	if p.sleep.CompareAndSwap(0, 2) {
		<-p.ch
	}
	p.sleep.Store(0)
}
func (p *ChanParker) Wake() {
	if p.sleep.Swap(1) == 2 {
		p.ch <- struct{}{}
	}
}
