// Package track records page visits.
package track

import (
	"strings"

	"example.com/hits/counter"
)

// Visit counts a visit to path in c; "/a/" and "/a" are the same page, "" is "/".
func Visit(c *counter.Counter, path string) int {
	if path != "/" {
		path = strings.TrimSuffix(path, "/")
	}
	if path == "" {
		path = "/"
	}
	return c.Inc(path)
}
