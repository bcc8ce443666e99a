package export

import (
	"bytes"
	"testing"

	"example.com/listing/format"
)

func TestHiddenExport(t *testing.T) {
	items := []format.Item{{"cup", 2, 4}}
	var b bytes.Buffer
	if err := Export(&b, items, "json"); err != nil || b.String() != `[{"name":"cup","qty":2,"price":4}]`+"\n" {
		t.Fatalf("json: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := Export(&b, items, "text"); err != nil || b.String() != "cup             2      4.00\nTOTAL                  8.00\n" {
		t.Fatalf("text: %q, %v", b.String(), err)
	}
	b.Reset()
	if err := Export(&b, items, "yaml"); err == nil || err.Error() != `unknown format "yaml"` || b.Len() != 0 {
		t.Fatalf("yaml: %q, %v", b.String(), err)
	}
}
