// Package report prints the most visited names.
package report

import (
	"fmt"
	"strings"

	"example.com/hits/counter"
)

// Summary lists the top n names, one "NAME COUNT" line each.
func Summary(n int) string {
	var b strings.Builder
	for _, name := range counter.Top(n) {
		fmt.Fprintf(&b, "%s %d\n", name, counter.Get(name))
	}
	return b.String()
}
