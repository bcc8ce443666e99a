// Package api maps inventory operations to HTTP answers.
package api

import (
	"net/http"
	"strconv"
	"strings"
)

// Inventory is what the API needs of a store.
type Inventory interface {
	Take(sku string, n int) error
	Count(sku string) (int, error)
}

// Take answers a request to take n of sku: the HTTP status and the body.
func Take(inv Inventory, sku string, n int) (int, string) {
	if err := inv.Take(sku, n); err != nil {
		return statusOf(err.Error())
	}
	return http.StatusOK, "ok"
}

// Count answers a request for the stock of sku.
func Count(inv Inventory, sku string) (int, string) {
	have, err := inv.Count(sku)
	if err != nil {
		return statusOf(err.Error())
	}
	return http.StatusOK, strconv.Itoa(have)
}

func statusOf(msg string) (int, string) {
	switch {
	case strings.Contains(msg, "not found"):
		return http.StatusNotFound, msg
	case strings.Contains(msg, "insufficient stock"):
		return http.StatusConflict, msg
	case strings.Contains(msg, "invalid quantity"):
		return http.StatusBadRequest, msg
	}
	return http.StatusInternalServerError, "internal error"
}
