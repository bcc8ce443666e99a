// Package store keeps tasks in memory.
package store

import "sync"

// Task is one item of the list.
type Task struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Owner string `json:"owner"`
	Done  bool   `json:"done"`
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
