package format

import (
	"bytes"
	"testing"
)

var (
	_ Formatter = Text{}
	_ Formatter = JSON{}
)

var items = []Item{{"pen", 3, 1.5}, {"notebook", 10, 2.25}}

func TestHiddenFormatters(t *testing.T) {
	var b bytes.Buffer
	if err := (Text{}).Format(&b, items); err != nil {
		t.Fatal(err)
	}
	want := "pen             3      1.50\nnotebook       10      2.25\nTOTAL                 27.00\n"
	if b.String() != want {
		t.Fatalf("text = %q, want %q", b.String(), want)
	}
	b.Reset()
	if err := (JSON{}).Format(&b, items); err != nil {
		t.Fatal(err)
	}
	if want := `[{"name":"pen","qty":3,"price":1.5},{"name":"notebook","qty":10,"price":2.25}]` + "\n"; b.String() != want {
		t.Fatalf("json = %q, want %q", b.String(), want)
	}
	b.Reset()
	(JSON{}).Format(&b, nil)
	if b.String() != "[]\n" {
		t.Fatalf("json of nil = %q", b.String())
	}
}

func TestHiddenByName(t *testing.T) {
	if f, err := ByName("json"); err != nil || f != (JSON{}) {
		t.Fatalf("ByName(json) = %#v, %v", f, err)
	}
	if f, err := ByName("text"); err != nil || f != (Text{}) {
		t.Fatalf("ByName(text) = %#v, %v", f, err)
	}
	if f, err := ByName("xml"); err == nil || f != nil || err.Error() != `unknown format "xml"` {
		t.Fatalf("ByName(xml) = %#v, %v", f, err)
	}
}
