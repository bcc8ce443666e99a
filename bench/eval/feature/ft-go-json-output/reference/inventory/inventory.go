// Package inventory reads stock items from CSV.
package inventory

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// Item is one stock line; prices are in cents.
type Item struct {
	SKU        string `json:"sku"`
	Name       string `json:"name"`
	Qty        int    `json:"qty"`
	PriceCents int    `json:"price_cents"`
}

// ValueCents is the value of the line: quantity times price.
func (it Item) ValueCents() int { return it.Qty * it.PriceCents }

type plainItem Item

// MarshalJSON adds value_cents to the fields.
func (it Item) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		plainItem
		ValueCents int `json:"value_cents"`
	}{plainItem(it), it.ValueCents()})
}

// Load reads `sku,name,qty,price_cents` records.
func Load(r io.Reader) ([]Item, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	items := make([]Item, 0, len(rows))
	for i, row := range rows {
		if len(row) != 4 {
			return nil, fmt.Errorf("line %d: want 4 fields, got %d", i+1, len(row))
		}
		qty, err1 := strconv.Atoi(row[2])
		price, err2 := strconv.Atoi(row[3])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: qty and price must be whole numbers", i+1)
		}
		items = append(items, Item{SKU: row[0], Name: row[1], Qty: qty, PriceCents: price})
	}
	return items, nil
}

// Total is the stock's value in cents.
func Total(items []Item) int {
	sum := 0
	for _, it := range items {
		sum += it.ValueCents()
	}
	return sum
}

// LowStock returns the items with a quantity below threshold, fewest first, then by SKU.
func LowStock(items []Item, threshold int) []Item {
	low := []Item{}
	for _, it := range items {
		if it.Qty < threshold {
			low = append(low, it)
		}
	}
	sort.SliceStable(low, func(i, j int) bool {
		if low[i].Qty != low[j].Qty {
			return low[i].Qty < low[j].Qty
		}
		return low[i].SKU < low[j].SKU
	})
	return low
}
