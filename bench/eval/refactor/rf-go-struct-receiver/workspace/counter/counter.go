// Package counter counts hits by name.
package counter

import (
	"sort"
	"sync"
)

var (
	mu     sync.Mutex
	counts = map[string]int{}
)

// Inc adds one hit for name and returns its new count.
func Inc(name string) int {
	mu.Lock()
	defer mu.Unlock()
	counts[name]++
	return counts[name]
}

// Get returns the hits for name (0 when never seen).
func Get(name string) int {
	mu.Lock()
	defer mu.Unlock()
	return counts[name]
}

// Top returns at most n names, most hits first, ties by name.
func Top(n int) []string {
	mu.Lock()
	defer mu.Unlock()
	names := make([]string, 0, len(counts))
	for name := range counts {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if counts[names[i]] != counts[names[j]] {
			return counts[names[i]] > counts[names[j]]
		}
		return names[i] < names[j]
	})
	if n >= 0 && n < len(names) {
		names = names[:n]
	}
	return names
}

// Reset forgets every hit.
func Reset() {
	mu.Lock()
	defer mu.Unlock()
	counts = map[string]int{}
}
