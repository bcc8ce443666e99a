// Package format writes item listings.
package format

import (
	"encoding/json"
	"fmt"
	"io"
)

// Item is one line of a listing.
type Item struct {
	Name  string  `json:"name"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

// Write writes items to w as a JSON array when asJSON is set, else as a text table.
func Write(w io.Writer, items []Item, asJSON bool) error {
	if asJSON {
		if items == nil {
			items = []Item{}
		}
		return json.NewEncoder(w).Encode(items)
	}
	total := 0.0
	for _, it := range items {
		if _, err := fmt.Fprintf(w, "%-12s %4d %9.2f\n", it.Name, it.Qty, it.Price); err != nil {
			return err
		}
		total += float64(it.Qty) * it.Price
	}
	_, err := fmt.Fprintf(w, "%-12s %4s %9.2f\n", "TOTAL", "", total)
	return err
}
