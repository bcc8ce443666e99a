package api

import (
	"testing"

	"example.com/stock/inventory"
)

func TestTake(t *testing.T) {
	s := inventory.NewStore()
	s.Add("pen", 1)
	if code, _ := Take(s, "pen", 2); code != 409 {
		t.Fatalf("code = %d", code)
	}
}
