// Package report prints the most visited names.
package report

import (
	"fmt"
	"strings"

	"example.com/hits/counter"
)

// Summary lists the top n names of c, one "NAME COUNT" line each.
func Summary(c *counter.Counter, n int) string {
	var b strings.Builder
	for _, name := range c.Top(n) {
		fmt.Fprintf(&b, "%s %d\n", name, c.Get(name))
	}
	return b.String()
}
