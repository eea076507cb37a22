package chans

import (
	"testing"
	"unsafe"
)

var layoutSink any

// TestLineSizedState checks that the per-goroutine state written at every
// parking or select call fills whole cache lines, so that two of them made
// one after another never share a line: the allocator gives an object whose
// size is a multiple of cacheLine a slot aligned to it. A field added to
// waiter or callState must leave this true (the padding is computed).
func TestLineSizedState(t *testing.T) {
	for _, c := range []struct {
		name string
		size uintptr
	}{
		{"lineWaiter", unsafe.Sizeof(lineWaiter{})},
		{"selCall", unsafe.Sizeof(selCall{})},
	} {
		if c.size%cacheLine != 0 {
			t.Errorf("%s is %d bytes, not a multiple of %d", c.name, c.size, cacheLine)
		}
	}
	w := recvWaiters.Get().(*waiter)
	defer recvWaiters.Put(w)
	h := New[int](1).Handle()
	layoutSink = h // on the heap, as a Handle that parks is
	for name, p := range map[string]uintptr{
		"pooled waiter":           uintptr(unsafe.Pointer(w)),
		"Handle's send waiter":    uintptr(unsafe.Pointer(h.ws)),
		"Handle's receive waiter": uintptr(unsafe.Pointer(h.wr)),
	} {
		if p%cacheLine != 0 {
			t.Errorf("a %s starts %d bytes into a cache line", name, p%cacheLine)
		}
	}
	sc := selCalls.Get().(*selCall)
	defer selCalls.Put(sc)
	for name, p := range map[string]uintptr{
		"selCall": uintptr(unsafe.Pointer(sc)),
		"order":   uintptr(unsafe.Pointer(unsafe.SliceData(sc.order))),
		"snap":    uintptr(unsafe.Pointer(unsafe.SliceData(sc.snap))),
		"snap2":   uintptr(unsafe.Pointer(unsafe.SliceData(sc.snap2))),
	} {
		if p%cacheLine != 0 {
			t.Errorf("a pooled select's %s starts %d bytes into a cache line", name, p%cacheLine)
		}
	}
}
