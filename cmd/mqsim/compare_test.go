package main

import (
	"bytes"
	"strings"
	"testing"

	"mqsim/scenarios/compare"
)

// mqsim compare prints the comparison of its workload and seed (the figures themselves
// are tested in scenarios/compare).
func TestCompareOrders(t *testing.T) {
	var out bytes.Buffer
	root := newRoot(&out, &out)
	root.SetArgs([]string{"compare", "orders", "--seed", "3"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	w, err := compare.Find("orders")
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := compare.Run(&want, w, 3, false); err != nil {
		t.Fatal(err)
	}
	if out.String() != want.String() {
		t.Errorf("mqsim compare orders --seed 3 printed:\n%s\nwant:\n%s", out.String(), want.String())
	}
}

func TestCompareUnknownWorkload(t *testing.T) {
	var out bytes.Buffer
	root := newRoot(&out, &out)
	root.SetArgs([]string{"compare", "nope"})
	if err := root.Execute(); err == nil || !strings.Contains(err.Error(), "want one of orders, calm") {
		t.Fatalf("err %v", err)
	}
}
