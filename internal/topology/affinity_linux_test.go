//go:build linux

package topology

import (
	"reflect"
	"runtime"
	"sync"
	"testing"
)

// TestPin pins the test process to one CPU, checks every thread, then pins
// it back.
func TestPin(t *testing.T) {
	old, err := Allowed()
	if err != nil {
		t.Skip(err)
	}
	defer func() {
		if err := Pin(old); err != nil {
			t.Errorf("restoring affinity: %v", err)
		}
	}()
	// Start a few threads so that there is more than one to pin.
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			<-start
		}()
	}
	target := old[len(old)-1:]
	if err := Pin(target); err != nil {
		t.Fatal(err)
	}
	close(start)
	wg.Wait()
	tids, err := threads()
	if err != nil {
		t.Fatal(err)
	}
	for _, tid := range tids {
		got, err := allowedOf(tid)
		if err != nil {
			continue // the thread exited
		}
		if !reflect.DeepEqual(got, target) {
			t.Errorf("thread %d has affinity %v, want %v", tid, got, target)
		}
	}
	if err := Pin(nil); err == nil {
		t.Error("Pin(nil) succeeded")
	}
	if err := Pin([]int{-1}); err == nil {
		t.Error("Pin([-1]) succeeded")
	}
}
