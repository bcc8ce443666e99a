package api

import (
	"errors"
	"fmt"
	"testing"

	"example.com/stock/inventory"
)

// fake answers with whatever error it is given, whatever its text.
type fake struct{ err error }

func (f fake) Take(sku string, n int) error   { return f.err }
func (f fake) Count(sku string) (int, error) { return 7, f.err }

type lookupError struct{}

func (lookupError) Error() string { return "lookup failed" }
func (lookupError) Unwrap() error { return inventory.ErrNotFound }

func TestHiddenStatusFollowsErrorTypesNotText(t *testing.T) {
	cases := []struct {
		err  error
		code int
		body string
	}{
		{nil, 200, "ok"},
		{lookupError{}, 404, "lookup failed"},
		{fmt.Errorf("shelf B: %w", lookupError{}), 404, "shelf B: lookup failed"},
		{fmt.Errorf("reserve: %w", &inventory.StockError{SKU: "x", Have: 1, Want: 2}), 409, "reserve: sku x: insufficient stock: have 1, want 2"},
		{fmt.Errorf("bad: %w", inventory.ErrInvalidQuantity), 400, "bad: invalid quantity"},
		{errors.New("not found"), 500, "internal error"},
		{errors.New("insufficient stock"), 500, "internal error"},
		{errors.New("disk on fire"), 500, "internal error"},
	}
	for _, c := range cases {
		code, body := Take(fake{c.err}, "x", 1)
		if code != c.code || body != c.body {
			t.Errorf("Take with %v = %d %q, want %d %q", c.err, code, body, c.code, c.body)
		}
	}
	if code, body := Count(fake{lookupError{}}, "x"); code != 404 || body != "lookup failed" {
		t.Errorf("Count = %d %q", code, body)
	}
	if code, body := Count(fake{}, "x"); code != 200 || body != "7" {
		t.Errorf("Count = %d %q", code, body)
	}
}

func TestHiddenWithRealStore(t *testing.T) {
	s := inventory.NewStore()
	s.Add("pen", 2)
	for _, c := range []struct {
		sku  string
		n    int
		code int
		body string
	}{
		{"pen", 1, 200, "ok"},
		{"pen", 0, 400, "invalid quantity"},
		{"pen", 5, 409, "sku pen: insufficient stock: have 1, want 5"},
		{"ink", 1, 404, "sku ink: not found"},
	} {
		if code, body := Take(s, c.sku, c.n); code != c.code || body != c.body {
			t.Errorf("Take(%s, %d) = %d %q, want %d %q", c.sku, c.n, code, body, c.code, c.body)
		}
	}
	if code, body := Count(s, "pen"); code != 200 || body != "1" {
		t.Errorf("Count = %d %q", code, body)
	}
}
