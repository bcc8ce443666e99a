package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"example.com/tasks/store"
)

func server() *Server {
	s := store.New()
	s.Add("write", "Ana")
	s.Add("read", "bo")
	s.Add("cook", "ana")
	s.SetDone(3, true)
	return &Server{Store: s}
}

func get(t *testing.T, srv *Server, url string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, url, nil))
	return rec.Code, strings.TrimSpace(rec.Body.String())
}

func titles(t *testing.T, body string) []string {
	t.Helper()
	var tasks []store.Task
	if err := json.Unmarshal([]byte(body), &tasks); err != nil {
		t.Fatalf("not a JSON list of tasks: %s", body)
	}
	out := []string{}
	for _, task := range tasks {
		out = append(out, task.Title)
	}
	return out
}

func TestHiddenQueryFilters(t *testing.T) {
	srv := server()
	cases := map[string]string{
		"/tasks?done=true":            "cook",
		"/tasks?done=false":           "write,read",
		"/tasks?owner=ana":            "write,cook",
		"/tasks?owner=ANA&done=false": "write",
		"/tasks":                      "write,read,cook",
	}
	for url, want := range cases {
		code, body := get(t, srv, url)
		if code != http.StatusOK {
			t.Errorf("%s: status %d", url, code)
			continue
		}
		if got := strings.Join(titles(t, body), ","); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
	}
}

func TestHiddenEmptyResultIsAList(t *testing.T) {
	code, body := get(t, server(), "/tasks?owner=nobody")
	if code != http.StatusOK || body != "[]" {
		t.Errorf("got %d %s, want 200 []", code, body)
	}
}

func TestHiddenBadDone(t *testing.T) {
	for _, url := range []string{"/tasks?done=maybe", "/tasks?done=1", "/tasks?done="} {
		code, body := get(t, server(), url)
		var e map[string]string
		if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || !strings.Contains(e["error"], "done") {
			t.Errorf("%s: got %d %s, want 400 with an error naming done", url, code, body)
		}
	}
}
