package client

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

type answer struct {
	code int
	body string
	err  error
}

// fake answers with its answers in turn and counts the requests.
type fake struct {
	answers []answer
	calls   int
	closed  int
}

type body struct {
	io.Reader
	f *fake
}

func (b body) Close() error { b.f.closed++; return nil }

func (f *fake) Do(req *http.Request) (*http.Response, error) {
	a := f.answers[f.calls]
	f.calls++
	if a.err != nil {
		return nil, a.err
	}
	return &http.Response{StatusCode: a.code, Body: body{strings.NewReader(a.body), f}}, nil
}

func TestGetJSON(t *testing.T) {
	f := &fake{answers: []answer{{code: 200, body: `{"sku":"A1","qty":3}`}}}
	var item struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	}
	if err := (&Client{HTTP: f, Base: "http://inv"}).GetJSON("/items/A1", &item); err != nil {
		t.Fatal(err)
	}
	if item.SKU != "A1" || item.Qty != 3 || f.closed != 1 {
		t.Fatalf("got %+v, closed %d", item, f.closed)
	}
	f = &fake{answers: []answer{{code: 404, body: "no"}}}
	err := (&Client{HTTP: f}).GetJSON("/items/B2", &item)
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 {
		t.Fatalf("want a StatusError 404, got %v", err)
	}
}
