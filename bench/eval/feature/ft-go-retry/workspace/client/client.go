// Package client fetches JSON documents from the inventory service.
package client

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
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

// Client sends GET requests to Base + path.
type Client struct {
	HTTP Doer
	Base string
}

// GetJSON fetches Base+path and decodes the JSON body into v.
func (c *Client) GetJSON(path string, v interface{}) error {
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
