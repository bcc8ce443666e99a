// Package report writes the daily stock report.
package report

import (
	"io"

	"example.com/listing/format"
)

// Daily writes a heading line, then the items with f.
func Daily(w io.Writer, items []format.Item, f format.Formatter) error {
	if _, err := io.WriteString(w, "Daily report\n"); err != nil {
		return err
	}
	return f.Format(w, items)
}
