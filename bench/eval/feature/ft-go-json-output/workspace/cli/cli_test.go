package cli

import (
	"bytes"
	"strings"
	"testing"
)

const stock = "A1,Tea,3,450\nB2,\"Mug, blue\",1,1299\n"

func run(input string, args ...string) (int, string, string) {
	var out, errs bytes.Buffer
	code := Run(args, strings.NewReader(input), &out, &errs)
	return code, out.String(), errs.String()
}

func TestListAndTotal(t *testing.T) {
	if code, out, _ := run(stock, "list"); code != 0 || out != "A1\tTea\t3\nB2\tMug, blue\t1\n" {
		t.Errorf("list: %d %q", code, out)
	}
	if code, out, _ := run(stock, "total"); code != 0 || out != "2 items, 2649 cents\n" {
		t.Errorf("total: %d %q", code, out)
	}
}

func TestErrors(t *testing.T) {
	if code, _, errs := run(stock, "sell"); code != 2 || !strings.Contains(errs, "usage") {
		t.Errorf("bad command: %d %q", code, errs)
	}
	if code, _, _ := run("A1,Tea,three,450\n", "list"); code != 1 {
		t.Errorf("bad input: %d", code)
	}
}
