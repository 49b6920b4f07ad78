package mockserver

import (
	"net/http/httptest"
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
