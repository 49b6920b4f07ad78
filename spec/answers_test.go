package spec

import (
	"sync"
	"testing"
)

// TestAnswers counts answers by operation and status, concurrently; a
// status outside 100..599 and an exchange of no operation are not counted.
func TestAnswers(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	a := NewAnswers(c)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				a.Count("listInventory", 200)
				a.Count("updateInventory", 404)
				a.Count("listInventory", 0)     // no answer
				a.Count("listInventory", 600)   // past the range
				a.Count("listInventory", 99)    // before it
				a.Count("no operation", 200)    // no operation of the contract
				a.Count("updateInventory", 599) // the last status counted
			}
		}()
	}
	wg.Wait()
	got := a.ByStatus()
	if len(got) != len(c.Operations) {
		t.Errorf("%d operations; want one entry for each of the %d", len(got), len(c.Operations))
	}
	want := map[string]map[int]int64{"listInventory": {200: 800}, "updateInventory": {404: 800, 599: 800}}
	for op, m := range want {
		for s, n := range m {
			if got[op][s] != n {
				t.Errorf("%s %d: %d; want %d", op, s, got[op][s], n)
			}
		}
		if len(got[op]) != len(m) {
			t.Errorf("%s: %v; want %v", op, got[op], m)
		}
	}
	var none *Answers
	none.Count("listInventory", 200) // a nil *Answers counts nothing
	if len(none.ByStatus()) != 0 {
		t.Error("a nil *Answers has counts")
	}
}
