// Package inventory keeps stock levels by SKU.
package inventory

import (
	"fmt"
	"sync"
)

// Store holds the quantity in stock of each SKU.
type Store struct {
	mu  sync.Mutex
	qty map[string]int
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{qty: map[string]int{}}
}

// Add puts n more of sku in stock.
func (s *Store) Add(sku string, n int) error {
	if n <= 0 {
		return ErrInvalidQuantity
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.qty[sku] += n
	return nil
}

// Take removes n of sku from stock.
func (s *Store) Take(sku string, n int) error {
	if n <= 0 {
		return ErrInvalidQuantity
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	have, ok := s.qty[sku]
	if !ok {
		return fmt.Errorf("sku %s: %w", sku, ErrNotFound)
	}
	if have < n {
		return &StockError{SKU: sku, Have: have, Want: n}
	}
	s.qty[sku] = have - n
	return nil
}

// Count returns how many of sku are in stock.
func (s *Store) Count(sku string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	have, ok := s.qty[sku]
	if !ok {
		return 0, fmt.Errorf("sku %s: %w", sku, ErrNotFound)
	}
	return have, nil
}
