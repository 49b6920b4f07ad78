package mockserver

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// TestJournalSinceID: since=ID returns what was journaled after that
// request, also a slow request that started before it, which the
// dashboard's live journal would otherwise never see.
func TestJournalSinceID(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 10 })
	srv := httptest.NewServer(s)
	defer srv.Close()
	if got := putChaos(t, s, `{"rules": [{"operation": "updateInventory", "latency": "300ms"}]}`); got.status != 200 {
		t.Fatalf("PUT chaos: %s", got.body)
	}
	slow := make(chan error, 1)
	go func() {
		_, _, err := faultClient(t, srv, "PATCH", "/v1/inventory/3", `{"quantity": 1}`)
		slow <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if resp, _, err := faultClient(t, srv, "GET", "/v1/inventory", ""); err != nil || resp.StatusCode != 200 {
		t.Fatalf("list: %v %v", resp, err)
	}
	seen := journalOf(t, s, "")
	if len(seen) != 1 || seen[0].Operation != "listInventory" || seen[0].Seq != 1 {
		t.Fatalf("journal while the update is served = %+v; want the list alone, seq 1", seen)
	}
	if err := <-slow; err != nil {
		t.Fatal(err)
	}
	got := journalOf(t, s, "?since="+seen[0].ID)
	if len(got) != 1 || got[0].Operation != "updateInventory" || got[0].Seq != 2 {
		t.Errorf("since the list = %+v; want the update, which started before it and was journaled after", got)
	}
	if all := journalOf(t, s, ""); len(all) != 2 || all[0].Operation != "listInventory" {
		t.Errorf("journal = %+v; want newest first by start: the list, then the update", all)
	}
}

// TestJournalPollingWithALimit polls the journal as a client would, a few
// entries at a time after the last one seen: every request is seen once,
// in the journal's order, and a page after a time is the first requests
// after it, not the newest.
func TestJournalPollingWithALimit(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 50 })
	const requests = 7
	for range requests {
		serve(t, s, req{method: "GET", path: "/v1/inventory"})
	}
	all := journalOf(t, s, "")
	if len(all) != requests {
		t.Fatalf("journal holds %d entries; want %d", len(all), requests)
	}
	// poll reads pages of two after since until one is empty, and
	// returns the seqs seen, in the order a client would show them.
	poll := func(since string) []uint64 {
		var seen []uint64
		for range requests {
			page := journalOf(t, s, "?limit=2&since="+since)
			if len(page) == 0 {
				break
			}
			for i := len(page) - 1; i >= 0; i-- { // newest first: read it backwards
				seen = append(seen, page[i].Seq)
			}
			since = page[0].ID
		}
		return seen
	}
	seqs := func(es []journalEntry) string {
		var out []uint64
		for _, e := range es {
			out = append(out, e.Seq)
		}
		return fmt.Sprint(out)
	}
	if first := seqs(journalOf(t, s, "?limit=2")); first != "[7 6]" {
		t.Errorf("two without since = seq %s; want the newest, [7 6]", first)
	}
	if got := poll(all[0].ID); len(got) != 0 {
		t.Errorf("after the newest: seq %v; want none", got)
	}
	if got := fmt.Sprint(poll(all[len(all)-1].ID)); got != "[2 3 4 5 6 7]" {
		t.Errorf("polled after the first entry, two at a time: seq %s; want [2 3 4 5 6 7], each once, in order", got)
	}
	if after := seqs(journalOf(t, s, "?limit=2&since="+url.QueryEscape(all[len(all)-2].Time))); after != "[4 3]" {
		t.Errorf("two after the second entry's time = seq %s; want the next two, [4 3]", after)
	}
}
