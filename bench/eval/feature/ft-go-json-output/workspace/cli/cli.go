// Package cli is the stock command line.
package cli

import (
	"fmt"
	"io"

	"example.com/stock/inventory"
)

// Run runs `list` or `total` over the CSV on stdin and returns the exit status:
// 0 done, 1 the input is bad, 2 the command line is.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 1 || (args[0] != "list" && args[0] != "total") {
		fmt.Fprintln(stderr, "usage: stock list|total")
		return 2
	}
	items, err := inventory.Load(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "stock:", err)
		return 1
	}
	if args[0] == "list" {
		for _, it := range items {
			fmt.Fprintf(stdout, "%s\t%s\t%d\n", it.SKU, it.Name, it.Qty)
		}
		return 0
	}
	fmt.Fprintf(stdout, "%d items, %d cents\n", len(items), inventory.Total(items))
	return 0
}
