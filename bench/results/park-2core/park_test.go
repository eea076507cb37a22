package parkbench

import "testing"

type parker interface {
	Park()
	Wake()
}

func pingpong(b *testing.B, a, c parker) {
	done := make(chan struct{})
	go func() {
		for i := 0; i < b.N; i++ {
			a.Park()
			c.Wake()
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		a.Wake()
		c.Park()
	}
	<-done
}

func BenchmarkGopark(b *testing.B)    { pingpong(b, &Parker{}, &Parker{}) }
func BenchmarkChanToken(b *testing.B) { pingpong(b, NewChanParker(), NewChanParker()) }
func BenchmarkNative(b *testing.B) {
	x, y := make(chan int), make(chan int)
	done := make(chan struct{})
	go func() {
		for i := 0; i < b.N; i++ {
			<-x
			y <- 1
		}
		close(done)
	}()
	for i := 0; i < b.N; i++ {
		x <- 1
		<-y
	}
	<-done
}
