// Package store keeps tasks in memory.
package store

import (
	"strings"
	"sync"
)

// Task is one item of the list.
type Task struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Owner string `json:"owner"`
	Done  bool   `json:"done"`
}

// Filter selects tasks: Done, when not nil, must equal the task's; Owner, when not empty, must
// equal the task's owner ignoring case.
type Filter struct {
	Done  *bool
	Owner string
}

// Store is safe for concurrent use.
type Store struct {
	mu    sync.Mutex
	tasks []Task
}

// New returns an empty store.
func New() *Store { return &Store{} }

// Add stores a new, not done task and returns it with its id (1, 2, ...).
func (s *Store) Add(title, owner string) Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := Task{ID: len(s.tasks) + 1, Title: title, Owner: owner}
	s.tasks = append(s.tasks, t)
	return t
}

// SetDone marks a task done or not; false when there is no such task.
func (s *Store) SetDone(id int, done bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.tasks {
		if s.tasks[i].ID == id {
			s.tasks[i].Done = done
			return true
		}
	}
	return false
}

// List returns a copy of all tasks, by id.
func (s *Store) List() []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Task(nil), s.tasks...)
}

// Find returns copies of the tasks the filter selects, by id; never nil.
func (s *Store) Find(f Filter) []Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []Task{}
	for _, t := range s.tasks {
		if f.Done != nil && t.Done != *f.Done {
			continue
		}
		if f.Owner != "" && !strings.EqualFold(f.Owner, t.Owner) {
			continue
		}
		out = append(out, t)
	}
	return out
}
