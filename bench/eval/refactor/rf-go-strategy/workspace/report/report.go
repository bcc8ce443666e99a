// Package report writes the daily stock report.
package report

import (
	"io"

	"example.com/listing/format"
)

// Daily writes a heading line, then the items as a text table.
func Daily(w io.Writer, items []format.Item) error {
	if _, err := io.WriteString(w, "Daily report\n"); err != nil {
		return err
	}
	return format.Write(w, items, false)
}
