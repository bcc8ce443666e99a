package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

const more = "C3,Cup,2,100\nA1,Tea,9,450\nB2,Mug,2,1299\n"

func TestHiddenListJSON(t *testing.T) {
	code, out, _ := run(more, "list", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var rows []map[string]interface{}
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("not JSON: %q", out)
	}
	if len(rows) != 3 || rows[1]["sku"] != "A1" || rows[1]["value_cents"] != float64(4050) || rows[2]["price_cents"] != float64(1299) {
		t.Errorf("rows: %v", rows)
	}
	if code, out, _ := run(more, "list", "--format", "text"); code != 0 || out != "C3\tCup\t2\nA1\tTea\t9\nB2\tMug\t2\n" {
		t.Errorf("text: %d %q", code, out)
	}
	if code, out, _ := run("", "list", "--format", "json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("empty: %d %q", code, out)
	}
}

func TestHiddenTotalJSON(t *testing.T) {
	code, out, _ := run(more, "total", "--format", "json")
	var got map[string]int
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got["items"] != 3 || got["value_cents"] != 6848 || len(got) != 2 {
		t.Errorf("total json: %d %q", code, out)
	}
}

func TestHiddenLowFlag(t *testing.T) {
	if code, out, _ := run(more, "list", "--low", "3"); code != 0 || out != "B2\tMug\t2\nC3\tCup\t2\n" {
		t.Errorf("--low: %d %q", code, out)
	}
	code, out, _ := run(more, "list", "--low", "5", "--format", "json")
	var rows []map[string]interface{}
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 2 || rows[0]["sku"] != "B2" {
		t.Errorf("--low json: %d %q", code, out)
	}
}

func TestHiddenBadFlags(t *testing.T) {
	if code, out, errs := run(more, "list", "--format", "xml"); code != 2 || out != "" || !strings.Contains(errs, "unknown format") {
		t.Errorf("xml: %d %q %q", code, out, errs)
	}
	if code, _, _ := run(more, "list", "--low", "many"); code != 2 {
		t.Errorf("--low many: %d", code)
	}
}
