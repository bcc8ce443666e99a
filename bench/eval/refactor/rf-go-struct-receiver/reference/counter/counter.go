// Package counter counts hits by name.
package counter

import (
	"sort"
	"sync"
)

// Counter counts hits by name; it is safe for concurrent use.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
}

// New returns an empty Counter.
func New() *Counter {
	return &Counter{counts: map[string]int{}}
}

// Inc adds one hit for name and returns its new count.
func (c *Counter) Inc(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[name]++
	return c.counts[name]
}

// Get returns the hits for name (0 when never seen).
func (c *Counter) Get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[name]
}

// Top returns at most n names, most hits first, ties by name.
func (c *Counter) Top(n int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.counts))
	for name := range c.counts {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if c.counts[names[i]] != c.counts[names[j]] {
			return c.counts[names[i]] > c.counts[names[j]]
		}
		return names[i] < names[j]
	})
	if n >= 0 && n < len(names) {
		names = names[:n]
	}
	return names
}

// Reset forgets every hit.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts = map[string]int{}
}
