package inventory

import (
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by the errors for a SKU the store does not know.
var ErrNotFound = errors.New("not found")

// ErrInvalidQuantity is returned for a quantity below one.
var ErrInvalidQuantity = errors.New("invalid quantity")

// StockError reports a Take of more than the store holds.
type StockError struct {
	SKU  string
	Have int
	Want int
}

func (e *StockError) Error() string {
	return fmt.Sprintf("sku %s: insufficient stock: have %d, want %d", e.SKU, e.Have, e.Want)
}
