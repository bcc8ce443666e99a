package counter

import "testing"

func TestInc(t *testing.T) {
	Reset()
	Inc("a")
	if got := Inc("a"); got != 2 {
		t.Fatalf("Inc = %d", got)
	}
}
