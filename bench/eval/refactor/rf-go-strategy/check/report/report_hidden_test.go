package report

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"example.com/listing/format"
)

type names struct{ err error }

func (n names) Format(w io.Writer, items []format.Item) error {
	for _, it := range items {
		io.WriteString(w, it.Name+";")
	}
	return n.err
}

func TestHiddenDailyUsesTheGivenFormatter(t *testing.T) {
	items := []format.Item{{"a", 1, 1}, {"b", 2, 0.5}}
	var b bytes.Buffer
	if err := Daily(&b, items, names{}); err != nil || b.String() != "Daily report\na;b;" {
		t.Fatalf("custom: %q, %v", b.String(), err)
	}
	boom := errors.New("boom")
	if err := Daily(&bytes.Buffer{}, items, names{boom}); err != boom {
		t.Fatalf("error not passed on: %v", err)
	}
	b.Reset()
	if err := Daily(&b, items, format.Text{}); err != nil || b.String() != "Daily report\na               1      1.00\nb               2      0.50\nTOTAL                  2.00\n" {
		t.Fatalf("text: %q, %v", b.String(), err)
	}
}
