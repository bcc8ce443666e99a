// Package export writes a listing in the format a user names.
package export

import (
	"fmt"
	"io"

	"example.com/listing/format"
)

// Export writes items as "json" or "text".
func Export(w io.Writer, items []format.Item, kind string) error {
	switch kind {
	case "json":
		return format.Write(w, items, true)
	case "text":
		return format.Write(w, items, false)
	}
	return fmt.Errorf("unknown format %q", kind)
}
