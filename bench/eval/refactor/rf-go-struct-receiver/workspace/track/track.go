// Package track records page visits.
package track

import (
	"strings"

	"example.com/hits/counter"
)

// Visit counts a visit to path; "/a/" and "/a" are the same page, "" is "/".
func Visit(path string) int {
	if path != "/" {
		path = strings.TrimSuffix(path, "/")
	}
	if path == "" {
		path = "/"
	}
	return counter.Inc(path)
}
