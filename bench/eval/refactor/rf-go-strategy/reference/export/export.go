// Package export writes a listing in the format a user names.
package export

import (
	"io"

	"example.com/listing/format"
)

// Export writes items as "json" or "text".
func Export(w io.Writer, items []format.Item, kind string) error {
	f, err := format.ByName(kind)
	if err != nil {
		return err
	}
	return f.Format(w, items)
}
