package report

import (
	"testing"

	"example.com/hits/counter"
)

func TestHiddenSummaryReadsTheGivenCounter(t *testing.T) {
	c, other := counter.New(), counter.New()
	for _, name := range []string{"/b", "/a", "/b", "/c"} {
		c.Inc(name)
	}
	other.Inc("/zzz")
	if got, want := Summary(c, 2), "/b 2\n/a 1\n"; got != want {
		t.Fatalf("Summary = %q, want %q", got, want)
	}
	if got := Summary(counter.New(), 3); got != "" {
		t.Fatalf("Summary of an empty counter = %q", got)
	}
}
