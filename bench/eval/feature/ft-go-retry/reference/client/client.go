// Package client fetches JSON documents from the inventory service.
package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"example.com/fetch/retry"
)

// Doer sends one request; *http.Client is one.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// StatusError is an answer with a status of 400 or more.
type StatusError struct {
	Code int
}

func (e *StatusError) Error() string { return fmt.Sprintf("status %d", e.Code) }

// Temporary reports whether a retry may succeed: server errors and 429.
func (e *StatusError) Temporary() bool { return e.Code >= 500 || e.Code == http.StatusTooManyRequests }

// Client sends GET requests to Base + path, retried as Retry says when it is not nil.
type Client struct {
	HTTP  Doer
	Base  string
	Retry *retry.Policy
}

// GetJSON fetches Base+path and decodes the JSON body into v.
func (c *Client) GetJSON(path string, v interface{}) error {
	if c.Retry == nil {
		return c.getOnce(path, v)
	}
	return c.Retry.Do(func() error { return c.getOnce(path, v) })
}

func (c *Client) getOnce(path string, v interface{}) error {
	req, err := http.NewRequest(http.MethodGet, c.Base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return &StatusError{Code: resp.StatusCode}
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
