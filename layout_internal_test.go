package chans

import (
	"testing"
	"unsafe"
)

var layoutSink any

// TestLineSizedState checks that the per-goroutine state written at every
// parking or select call fills whole cache lines, so that two of them made
// one after another never share a line: the allocator gives an object whose
// size is a multiple of cacheLine a slot aligned to it, up to 512 bytes for
// an object with pointers (larger ones carry a header). A field added to
// waiter or callState keeps the sizes right (the padding is computed), but
// may take selCall past that.
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
	w := recvWaiters.New().(*waiter) // a new one: the pool may hold one from before
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
	pooled := selCalls.New().(*selCall)
	sel := NewSelector(OnRecv(New[int](1), nil))
	layoutSink = sel
	for who, sc := range map[string]*selCall{"pooled select": pooled, "Selector": sel.sc} {
		for name, p := range map[string]uintptr{
			"state": uintptr(unsafe.Pointer(sc)),
			"order": uintptr(unsafe.Pointer(unsafe.SliceData(sc.order))),
			"snap":  uintptr(unsafe.Pointer(unsafe.SliceData(sc.snap))),
			"snap2": uintptr(unsafe.Pointer(unsafe.SliceData(sc.snap2))),
		} {
			if p%cacheLine != 0 {
				t.Errorf("a %s's %s starts %d bytes into a cache line", who, name, p%cacheLine)
			}
		}
		for name, n := range map[string]int{"order": cap(sc.order), "snap": cap(sc.snap), "snap2": cap(sc.snap2)} {
			if n*8%cacheLine != 0 {
				t.Errorf("a %s's %s holds %d bytes, not whole cache lines", who, name, n*8)
			}
		}
	}
}
