// Package api serves a store over HTTP as JSON.
package api

import (
	"encoding/json"
	"net/http"

	"example.com/tasks/store"
)

// Server answers GET /tasks (the list) and POST /tasks ({"title", "owner"}).
type Server struct {
	Store *store.Store
}

func writeJSON(w http.ResponseWriter, status int, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/tasks" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	switch r.Method {
	case http.MethodGet:
		tasks := s.Store.List()
		if tasks == nil {
			tasks = []store.Task{}
		}
		writeJSON(w, http.StatusOK, tasks)
	case http.MethodPost:
		var in struct {
			Title string `json:"title"`
			Owner string `json:"owner"`
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "title is required"})
			return
		}
		writeJSON(w, http.StatusCreated, s.Store.Add(in.Title, in.Owner))
	default:
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
	}
}
