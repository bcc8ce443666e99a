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

// Formatter writes a listing in one format.
type Formatter interface {
	Format(w io.Writer, items []Item) error
}

// Text writes a table with a TOTAL line.
type Text struct{}

// JSON writes a JSON array.
type JSON struct{}

// Format implements Formatter.
func (Text) Format(w io.Writer, items []Item) error {
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

// Format implements Formatter.
func (JSON) Format(w io.Writer, items []Item) error {
	if items == nil {
		items = []Item{}
	}
	return json.NewEncoder(w).Encode(items)
}

// ByName returns the formatter called name: "json" or "text".
func ByName(name string) (Formatter, error) {
	switch name {
	case "json":
		return JSON{}, nil
	case "text":
		return Text{}, nil
	}
	return nil, fmt.Errorf("unknown format %q", name)
}
