package counter

import (
	"reflect"
	"sync"
	"testing"
)

func TestHiddenCountersAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.Inc("x")
	if got := a.Inc("x"); got != 2 {
		t.Fatalf("a.Inc = %d, want 2", got)
	}
	if got := b.Get("x"); got != 0 {
		t.Fatalf("b.Get = %d, want 0: counters share state", got)
	}
	if got := b.Inc("x"); got != 1 {
		t.Fatalf("b.Inc = %d, want 1", got)
	}
	a.Reset()
	if a.Get("x") != 0 || b.Get("x") != 1 {
		t.Fatalf("Reset of a touched b or failed: a=%d b=%d", a.Get("x"), b.Get("x"))
	}
	if got := a.Top(5); len(got) != 0 {
		t.Fatalf("Top after Reset = %v", got)
	}
}

func TestHiddenTopAndConcurrency(t *testing.T) {
	c := New()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				c.Inc("hot")
			}
		}()
	}
	wg.Wait()
	if got := c.Get("hot"); got != 800 {
		t.Fatalf("Get(hot) = %d, want 800", got)
	}
	for _, name := range []string{"b", "a", "b", "c", "a", "d"} {
		c.Inc(name)
	}
	if got, want := c.Top(3), []string{"hot", "a", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Top(3) = %v, want %v", got, want)
	}
	if got, want := c.Top(-1), []string{"hot", "a", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Top(-1) = %v, want %v", got, want)
	}
}
