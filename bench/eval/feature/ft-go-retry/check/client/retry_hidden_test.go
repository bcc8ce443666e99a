package client

import (
	"errors"
	"testing"
	"time"

	"example.com/fetch/retry"
)

func policy(slept *[]time.Duration) *retry.Policy {
	return &retry.Policy{Attempts: 4, Base: 10 * time.Millisecond, Sleep: func(d time.Duration) { *slept = append(*slept, d) }}
}

func TestHiddenClientRetriesServerErrors(t *testing.T) {
	var slept []time.Duration
	f := &fake{answers: []answer{{code: 503}, {err: errors.New("reset")}, {code: 429}, {code: 200, body: `{"qty":7}`}}}
	c := &Client{HTTP: f, Base: "http://inv", Retry: policy(&slept)}
	var item struct{ Qty int }
	if err := c.GetJSON("/items/A1", &item); err != nil {
		t.Fatal(err)
	}
	if item.Qty != 7 || f.calls != 4 || f.closed != 3 {
		t.Fatalf("qty %d, calls %d, bodies closed %d", item.Qty, f.calls, f.closed)
	}
	if len(slept) != 3 || slept[0] != 10*time.Millisecond || slept[2] != 40*time.Millisecond {
		t.Fatalf("slept %v", slept)
	}
}

func TestHiddenClientStopsOnClientErrors(t *testing.T) {
	var slept []time.Duration
	f := &fake{answers: []answer{{code: 404}, {code: 200, body: "{}"}}}
	err := (&Client{HTTP: f, Retry: policy(&slept)}).GetJSON("/x", &struct{}{})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 404 || f.calls != 1 || len(slept) != 0 {
		t.Fatalf("err %v, calls %d", err, f.calls)
	}
	if se.Temporary() || !(&StatusError{Code: 500}).Temporary() || !(&StatusError{Code: 429}).Temporary() {
		t.Fatal("Temporary: 5xx and 429 only")
	}
}

func TestHiddenClientGivesUpAndNoPolicy(t *testing.T) {
	var slept []time.Duration
	f := &fake{answers: []answer{{code: 500}, {code: 502}, {code: 503}, {code: 504}, {code: 200, body: "{}"}}}
	err := (&Client{HTTP: f, Retry: policy(&slept)}).GetJSON("/x", &struct{}{})
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 504 || f.calls != 4 {
		t.Fatalf("err %v, calls %d", err, f.calls)
	}
	f = &fake{answers: []answer{{code: 503}, {code: 200, body: "{}"}}}
	err = (&Client{HTTP: f}).GetJSON("/x", &struct{}{})
	if !errors.As(err, &se) || se.Code != 503 || f.calls != 1 {
		t.Fatalf("without a policy: err %v, calls %d", err, f.calls)
	}
}
