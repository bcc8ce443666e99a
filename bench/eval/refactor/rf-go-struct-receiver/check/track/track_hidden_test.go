package track

import (
	"testing"

	"example.com/hits/counter"
)

func TestHiddenVisitCountsInTheGivenCounter(t *testing.T) {
	c, other := counter.New(), counter.New()
	Visit(c, "/docs/")
	if got := Visit(c, "/docs"); got != 2 {
		t.Fatalf("Visit = %d, want 2", got)
	}
	Visit(c, "")
	if got := Visit(c, "/"); got != 2 {
		t.Fatalf("Visit(/) = %d, want 2", got)
	}
	if got := other.Get("/docs"); got != 0 {
		t.Fatalf("another counter saw %d visits", got)
	}
}
