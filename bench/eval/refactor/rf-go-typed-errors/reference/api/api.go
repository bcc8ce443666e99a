// Package api maps inventory operations to HTTP answers.
package api

import (
	"errors"
	"net/http"
	"strconv"

	"example.com/stock/inventory"
)

// Inventory is what the API needs of a store.
type Inventory interface {
	Take(sku string, n int) error
	Count(sku string) (int, error)
}

// Take answers a request to take n of sku: the HTTP status and the body.
func Take(inv Inventory, sku string, n int) (int, string) {
	if err := inv.Take(sku, n); err != nil {
		return statusOf(err)
	}
	return http.StatusOK, "ok"
}

// Count answers a request for the stock of sku.
func Count(inv Inventory, sku string) (int, string) {
	have, err := inv.Count(sku)
	if err != nil {
		return statusOf(err)
	}
	return http.StatusOK, strconv.Itoa(have)
}

func statusOf(err error) (int, string) {
	var stock *inventory.StockError
	switch {
	case errors.Is(err, inventory.ErrNotFound):
		return http.StatusNotFound, err.Error()
	case errors.As(err, &stock):
		return http.StatusConflict, err.Error()
	case errors.Is(err, inventory.ErrInvalidQuantity):
		return http.StatusBadRequest, err.Error()
	}
	return http.StatusInternalServerError, "internal error"
}
