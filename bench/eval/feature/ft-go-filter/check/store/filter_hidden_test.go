package store

import "testing"

func seeded() *Store {
	s := New()
	s.Add("write", "Ana")
	s.Add("read", "bo")
	s.Add("cook", "ana")
	s.Add("sleep", "cy")
	s.SetDone(2, true)
	s.SetDone(3, true)
	return s
}

func ids(tasks []Task) []int {
	out := []int{}
	for _, t := range tasks {
		out = append(out, t.ID)
	}
	return out
}

func same(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestHiddenFindByDone(t *testing.T) {
	s := seeded()
	yes, no := true, false
	if got := ids(s.Find(Filter{Done: &yes})); !same(got, []int{2, 3}) {
		t.Errorf("done: %v", got)
	}
	if got := ids(s.Find(Filter{Done: &no})); !same(got, []int{1, 4}) {
		t.Errorf("not done: %v", got)
	}
	if got := ids(s.Find(Filter{})); !same(got, []int{1, 2, 3, 4}) {
		t.Errorf("all: %v", got)
	}
}

func TestHiddenFindByOwner(t *testing.T) {
	s := seeded()
	no := false
	if got := ids(s.Find(Filter{Owner: "ANA"})); !same(got, []int{1, 3}) {
		t.Errorf("owner: %v", got)
	}
	if got := ids(s.Find(Filter{Owner: "ana", Done: &no})); !same(got, []int{1}) {
		t.Errorf("owner and not done: %v", got)
	}
	if got := s.Find(Filter{Owner: "nobody"}); got == nil || len(got) != 0 {
		t.Errorf("no match should be an empty, non-nil slice: %#v", got)
	}
	found := s.Find(Filter{Owner: "bo"})
	found[0].Title = "changed"
	if s.List()[1].Title != "read" {
		t.Error("Find must return a copy")
	}
}
