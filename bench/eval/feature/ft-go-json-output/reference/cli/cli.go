// Package cli is the stock command line.
package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"example.com/stock/inventory"
)

// Run runs `list` or `total` over the CSV on stdin and returns the exit status:
// 0 done, 1 the input is bad, 2 the command line is.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) < 1 || (args[0] != "list" && args[0] != "total") {
		fmt.Fprintln(stderr, "usage: stock list|total [--format text|json] [--low N]")
		return 2
	}
	command := args[0]
	flags := flag.NewFlagSet("stock "+command, flag.ContinueOnError)
	flags.SetOutput(stderr)
	format := flags.String("format", "text", "text or json")
	low := -1
	if command == "list" {
		flags.IntVar(&low, "low", -1, "only items with a quantity below N")
	}
	if err := flags.Parse(args[1:]); err != nil || flags.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: stock list|total [--format text|json] [--low N]")
		return 2
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(stderr, "stock: unknown format %q\n", *format)
		return 2
	}
	items, err := inventory.Load(stdin)
	if err != nil {
		fmt.Fprintln(stderr, "stock:", err)
		return 1
	}
	if command == "list" {
		if low >= 0 {
			items = inventory.LowStock(items, low)
		}
		if *format == "json" {
			return writeJSON(stdout, items)
		}
		for _, it := range items {
			fmt.Fprintf(stdout, "%s\t%s\t%d\n", it.SKU, it.Name, it.Qty)
		}
		return 0
	}
	if *format == "json" {
		return writeJSON(stdout, map[string]int{"items": len(items), "value_cents": inventory.Total(items)})
	}
	fmt.Fprintf(stdout, "%d items, %d cents\n", len(items), inventory.Total(items))
	return 0
}

func writeJSON(w io.Writer, v interface{}) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 1
	}
	fmt.Fprintf(w, "%s\n", b)
	return 0
}
