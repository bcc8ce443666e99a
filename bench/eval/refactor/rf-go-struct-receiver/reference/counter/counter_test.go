package counter

import "testing"

func TestInc(t *testing.T) {
	c := New()
	c.Inc("a")
	if got := c.Inc("a"); got != 2 {
		t.Fatalf("Inc = %d", got)
	}
}
