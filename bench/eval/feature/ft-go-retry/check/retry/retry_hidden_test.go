package retry

import (
	"errors"
	"testing"
	"time"
)

type temporary struct{ temp bool }

func (e temporary) Error() string   { return "t" }
func (e temporary) Temporary() bool { return e.temp }

func TestHiddenDelay(t *testing.T) {
	p := Policy{Attempts: 6, Base: 100 * time.Millisecond, Max: time.Second}
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for i, w := range want {
		if got := p.Delay(i + 1); got != w*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	if got := (Policy{Base: time.Second}).Delay(4); got != 8*time.Second {
		t.Errorf("no Max: Delay(4) = %v", got)
	}
}

func TestHiddenDoRetriesUntilSuccess(t *testing.T) {
	var slept []time.Duration
	p := Policy{Attempts: 5, Base: time.Millisecond, Sleep: func(d time.Duration) { slept = append(slept, d) }}
	calls := 0
	err := p.Do(func() error {
		calls++
		if calls < 3 {
			return errors.New("flaky")
		}
		return nil
	})
	if err != nil || calls != 3 || len(slept) != 2 || slept[0] != time.Millisecond || slept[1] != 2*time.Millisecond {
		t.Fatalf("err %v, calls %d, slept %v", err, calls, slept)
	}
}

func TestHiddenDoGivesUp(t *testing.T) {
	sleeps := 0
	p := Policy{Attempts: 3, Base: time.Millisecond, Sleep: func(time.Duration) { sleeps++ }}
	calls := 0
	last := errors.New("third")
	err := p.Do(func() error {
		calls++
		if calls == 3 {
			return last
		}
		return errors.New("again")
	})
	if err != last || calls != 3 || sleeps != 2 {
		t.Fatalf("err %v, calls %d, sleeps %d", err, calls, sleeps)
	}
	calls = 0
	permanent := temporary{false}
	if err := p.Do(func() error { calls++; return permanent }); err != permanent || calls != 1 {
		t.Fatalf("a permanent error: err %v after %d calls", err, calls)
	}
	calls = 0
	if err := (Policy{Sleep: func(time.Duration) {}}).Do(func() error { calls++; return errors.New("x") }); err == nil || calls != 1 {
		t.Fatalf("Attempts 0 runs once: %d calls", calls)
	}
	if !Retryable(errors.New("plain")) || !Retryable(temporary{true}) || Retryable(temporary{false}) {
		t.Fatal("Retryable")
	}
}
