package inventory

import (
	"errors"
	"testing"
)

func TestHiddenSentinelErrors(t *testing.T) {
	s := NewStore()
	if err := s.Add("pen", 0); err != ErrInvalidQuantity {
		t.Fatalf("Add(0) = %v, want ErrInvalidQuantity", err)
	}
	if err := s.Take("pen", -1); !errors.Is(err, ErrInvalidQuantity) {
		t.Fatalf("Take(-1) = %v, want ErrInvalidQuantity", err)
	}
	err := s.Take("ink", 1)
	if !errors.Is(err, ErrNotFound) || err.Error() != "sku ink: not found" {
		t.Fatalf("Take(unknown) = %v", err)
	}
	_, err = s.Count("ink")
	if !errors.Is(err, ErrNotFound) || err.Error() != "sku ink: not found" {
		t.Fatalf("Count(unknown) = %v", err)
	}
	if ErrNotFound.Error() != "not found" || ErrInvalidQuantity.Error() != "invalid quantity" {
		t.Fatalf("sentinel texts changed: %q %q", ErrNotFound, ErrInvalidQuantity)
	}
}

func TestHiddenStockError(t *testing.T) {
	s := NewStore()
	if err := s.Add("pen", 3); err != nil {
		t.Fatal(err)
	}
	err := s.Take("pen", 5)
	var stock *StockError
	if !errors.As(err, &stock) {
		t.Fatalf("Take(5) = %v (%T), want a *StockError", err, err)
	}
	if stock.SKU != "pen" || stock.Have != 3 || stock.Want != 5 {
		t.Fatalf("StockError = %+v", *stock)
	}
	if err.Error() != "sku pen: insufficient stock: have 3, want 5" {
		t.Fatalf("message = %q", err.Error())
	}
	if errors.Is(err, ErrNotFound) {
		t.Fatal("a stock error is not ErrNotFound")
	}
	if err := s.Take("pen", 3); err != nil {
		t.Fatalf("Take(3) = %v", err)
	}
	if n, err := s.Count("pen"); n != 0 || err != nil {
		t.Fatalf("Count = %d, %v", n, err)
	}
}
