package inventory

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestHiddenItemJSON(t *testing.T) {
	it := Item{SKU: "A1", Name: "Tea", Qty: 3, PriceCents: 450}
	if it.ValueCents() != 1350 {
		t.Errorf("ValueCents = %d", it.ValueCents())
	}
	b, err := json.Marshal(it)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sku":"A1","name":"Tea","qty":3,"price_cents":450,"value_cents":1350}`
	if string(b) != want {
		t.Errorf("json: %s, want %s", b, want)
	}
	var back Item
	if err := json.Unmarshal(b, &back); err != nil || back != it {
		t.Errorf("round trip: %+v %v", back, err)
	}
}

func TestHiddenLowStock(t *testing.T) {
	items, err := Load(strings.NewReader("C3,Cup,2,100\nA1,Tea,9,450\nB2,Mug,2,1299\nD4,Pot,0,2500\n"))
	if err != nil {
		t.Fatal(err)
	}
	low := LowStock(items, 3)
	got := []string{}
	for _, it := range low {
		got = append(got, it.SKU)
	}
	if strings.Join(got, ",") != "D4,B2,C3" {
		t.Errorf("LowStock = %v, want D4,B2,C3", got)
	}
	if items[0].SKU != "C3" {
		t.Error("LowStock must not reorder its argument")
	}
	if none := LowStock(items, 0); none == nil || len(none) != 0 {
		t.Errorf("LowStock(0) = %#v, want an empty slice", none)
	}
}
