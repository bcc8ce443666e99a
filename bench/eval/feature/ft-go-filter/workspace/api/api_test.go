package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"example.com/tasks/store"
)

func TestCreateAndList(t *testing.T) {
	srv := &Server{Store: store.New()}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/tasks", strings.NewReader(`{"title":"plan","owner":"ana"}`)))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/tasks", nil))
	var tasks []store.Task
	if err := json.Unmarshal(rec.Body.Bytes(), &tasks); err != nil || len(tasks) != 1 || tasks[0].Title != "plan" {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
}
