package store

import "testing"

func TestAddAndList(t *testing.T) {
	s := New()
	s.Add("write", "ana")
	s.Add("read", "bo")
	if !s.SetDone(2, true) || s.SetDone(9, true) {
		t.Fatal("SetDone")
	}
	got := s.List()
	if len(got) != 2 || got[0].ID != 1 || !got[1].Done || got[1].Owner != "bo" {
		t.Fatalf("List() = %+v", got)
	}
}
