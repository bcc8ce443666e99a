// Package retry runs an operation again after temporary failures, with exponential backoff.
package retry

import (
	"errors"
	"time"
)

// Policy says how often and how long to wait: up to Attempts calls (at least one), waiting
// Delay(n) before retry n, through Sleep (time.Sleep when nil).
type Policy struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
	Sleep    func(time.Duration)
}

// Delay is the wait before retry number attempt (1, 2, ...): Base doubled attempt-1 times,
// at most Max when Max > 0.
func (p Policy) Delay(attempt int) time.Duration {
	d := p.Base
	for i := 1; i < attempt; i++ {
		d *= 2
		if p.Max > 0 && d >= p.Max {
			return p.Max
		}
	}
	if p.Max > 0 && d > p.Max {
		return p.Max
	}
	return d
}

// Retryable reports whether err may go away on a retry: false only when it (or an error it
// wraps) has a Temporary method that says false.
func Retryable(err error) bool {
	var t interface{ Temporary() bool }
	if errors.As(err, &t) {
		return t.Temporary()
	}
	return true
}

// Do calls fn until it returns nil, returns an error that is not Retryable, or has been called
// Attempts times; it returns fn's last error.
func (p Policy) Do(fn func() error) error {
	attempts := p.Attempts
	if attempts < 1 {
		attempts = 1
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = time.Sleep
	}
	var err error
	for i := 1; i <= attempts; i++ {
		if i > 1 {
			sleep(p.Delay(i - 1))
		}
		if err = fn(); err == nil || !Retryable(err) {
			return err
		}
	}
	return err
}
