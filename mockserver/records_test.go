package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// records asks GET /__admin/records and decodes the page; serve checks the
// answer against the admin document.
func records(t *testing.T, s *Server, query string) (total int, items []item) {
	t.Helper()
	got := serve(t, s, req{method: "GET", path: "/__admin/records" + query})
	if got.status != 200 {
		t.Fatalf("GET /__admin/records%s: %d %s", query, got.status, got.body)
	}
	var page struct {
		Total   int    `json:"total"`
		Records []item `json:"records"`
	}
	if err := json.Unmarshal(got.body, &page); err != nil {
		t.Fatal(err)
	}
	return page.Total, page.Records
}

var statusOrder = []string{"available", "pending", "sold"}

func TestRecords(t *testing.T) {
	s := newServer(t)
	all := testItems(t)
	where := func(keep func(item) bool) []item {
		var out []item
		for _, it := range all {
			if keep(it) {
				out = append(out, it)
			}
		}
		return out
	}
	sorted := func(items []item, by func(a, b item) int) []item {
		out := slices.Clone(items)
		slices.SortStableFunc(out, by)
		return out
	}
	byQuantity := func(a, b item) int { return cmp.Compare(a.Quantity, b.Quantity) }
	byStatus := func(a, b item) int {
		return cmp.Compare(slices.Index(statusOrder, a.Status), slices.Index(statusOrder, b.Status))
	}
	reversed := func(items []item) []item { out := slices.Clone(items); slices.Reverse(out); return out }
	sold := where(func(it item) bool { return it.Status == "sold" })
	page := func(items []item, offset, limit int) []item {
		return items[min(offset, len(items)):min(offset+limit, len(items))]
	}
	tests := []struct {
		query string
		total int
		want  []item
	}{
		{"", 64, page(all, 0, 50)},
		{"?offset=60&limit=10", 64, page(all, 60, 10)},
		{"?offset=100", 64, nil},
		{"?order=desc&limit=3", 64, page(reversed(all), 0, 3)},
		{"?order=desc&offset=62&limit=5", 64, page(reversed(all), 62, 5)},
		{"?sort=petId&order=desc&limit=5", 64, page(reversed(all), 0, 5)},
		{"?sort=quantity&limit=64", 64, sorted(all, byQuantity)},
		// Descending, equal values stay in key order.
		{"?sort=quantity&order=desc&limit=64", 64, sorted(all, func(a, b item) int { return byQuantity(b, a) })},
		// An enum sorts in the schema's order of its values.
		{"?sort=status&limit=64", 64, sorted(all, byStatus)},
		{"?filter=status:sold&limit=64", len(sold), sold},
		{"?filter=status:sold&sort=quantity&order=desc&limit=64", len(sold), sorted(sold, func(a, b item) int { return byQuantity(b, a) })},
		{"?filter=status:sold&order=desc&limit=2", len(sold), page(reversed(sold), 0, 2)},
		// The first pages keep only the rows up to the page's end (fewer
		// than a quarter of the records); the order is the same as a full
		// sort's, ties included.
		{"?sort=quantity&limit=5", 64, page(sorted(all, byQuantity), 0, 5)},
		{"?sort=quantity&order=desc&offset=4&limit=6", 64, page(sorted(all, func(a, b item) int { return byQuantity(b, a) }), 4, 6)},
		{"?sort=status&offset=3&limit=9", 64, page(sorted(all, byStatus), 3, 9)},
		{"?sort=status&order=desc&limit=15", 64, page(sorted(all, func(a, b item) int { return byStatus(b, a) }), 0, 15)},
		{"?filter=status:sold&sort=quantity&limit=3", len(sold), page(sorted(sold, byQuantity), 0, 3)},
		{"?filter=status:sold&sort=petId&order=desc&offset=1&limit=2", len(sold), page(reversed(sold), 1, 2)},
		{"?sort=quantity&offset=60&limit=10", 64, page(sorted(all, byQuantity), 60, 10)},
		// A key finds its record in the store, as numbers compare: 5.0 is 5.
		{"?filter=petId:5", 1, all[4:5]},
		{"?filter=petId:5.0", 1, all[4:5]},
		{"?filter=petId:5&filter=status:" + all[4].Status, 1, all[4:5]},
		{"?filter=status:" + otherStatus(all[4].Status) + "&filter=petId:5", 0, nil},
		{"?filter=petId:5&offset=1", 1, nil},
		{"?filter=petId:5.5", 0, nil},
		{"?filter=petId:-1", 0, nil},
		{"?filter=petId:9223372036854775808", 0, nil},
		{fmt.Sprintf("?filter=quantity:%d.0&filter=status:%s", all[9].Quantity, all[9].Status), -1, nil},
		{"?filter=petId:999", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			total, got := records(t, s, tt.query)
			if tt.total == -1 { // numbers compare as numbers: 5.0 is 5
				if !slices.Contains(got, all[9]) {
					t.Errorf("got %+v; want pet 10 among them", got)
				}
				return
			}
			if total != tt.total || !slices.Equal(got, tt.want) {
				t.Errorf("total %d, records %+v;\nwant total %d, records %+v", total, got, tt.total, tt.want)
			}
		})
	}
}

// otherStatus returns a status that is not s.
func otherStatus(s string) string {
	for _, o := range statusOrder {
		if o != s {
			return o
		}
	}
	return ""
}

// A listCounter is a store that counts the lists read from it.
type listCounter struct {
	store.Store
	lists atomic.Int64
}

func (c *listCounter) List(ctx context.Context, session string) (store.List, error) {
	c.lists.Add(1)
	return c.Store.List(ctx, session)
}

// TestRecordsFindKey: the dashboard's "Find petId" reads the one record
// from the store, not the list of every record; and it sees the session's
// writes.
func TestRecordsFindKey(t *testing.T) {
	counter := &listCounter{Store: store.NewMemory(testRecords(t), store.Options{})}
	s := newServer(t, func(c *Config) { c.Store = counter })
	serve(t, s, withHeader(req{method: "PATCH", path: "/v1/inventory/7", body: `{"quantity": 707}`}, SessionHeader, "alice"))
	lists := counter.lists.Load()
	for _, tt := range []struct {
		query string
		total int
		want  int64 // the quantity of the record found
	}{
		{"?filter=petId:7&session=alice", 1, 707},
		{"?filter=petId:7", 1, testItems(t)[6].Quantity},
		{"?filter=petId:7&filter=status:" + testItems(t)[6].Status + "&sort=quantity&order=desc", 1, testItems(t)[6].Quantity},
		{"?filter=petId:70000", 0, 0},
	} {
		total, got := records(t, s, tt.query)
		if total != tt.total || (tt.total == 1 && (len(got) != 1 || got[0].PetID != 7 || got[0].Quantity != tt.want)) {
			t.Errorf("%s: total %d, %+v; want pet 7 with quantity %d", tt.query, total, got, tt.want)
		}
	}
	if n := counter.lists.Load() - lists; n != 0 {
		t.Errorf("finding a key read the whole list %d times; want none", n)
	}
}

func TestRecordsSessions(t *testing.T) {
	s := newServer(t)
	serve(t, s, withHeader(req{method: "PATCH", path: "/v1/inventory/3", body: `{"quantity": 777}`}, SessionHeader, "alice"))
	for _, tt := range []struct {
		r    req
		want int64
	}{
		{req{method: "GET", path: "/__admin/records?filter=petId:3&session=alice"}, 777},
		{withHeader(req{method: "GET", path: "/__admin/records?filter=petId:3"}, SessionHeader, "alice"), 777},
		{req{method: "GET", path: "/__admin/records?filter=petId:3"}, testItems(t)[2].Quantity},
	} {
		got := serve(t, s, tt.r)
		if !strings.Contains(string(got.body), fmt.Sprintf(`"quantity":%d`, tt.want)) {
			t.Errorf("%s %v: %s; want quantity %d", tt.r.path, tt.r.header, got.body, tt.want)
		}
	}
}

func TestRecordsMistakes(t *testing.T) {
	s := newServer(t, func(c *Config) { c.AdminKey = "admin-key" })
	admin := "Bearer admin-key"
	tests := []struct {
		query   string
		status  int
		code    string
		message string
	}{
		{"?sort=nope", 400, httpapi.CodeInvalidParameter, `sort: InventoryItem has no field "nope"; it has petId, quantity, status`},
		{"?filter=status", 400, httpapi.CodeInvalidParameter, `filter "status": want FIELD:VALUE, such as status:sold`},
		{"?filter=status:lost", 400, httpapi.CodeInvalidParameter, `filter "status:lost": status is one of available, pending, sold`},
		{"?filter=quantity:many", 400, httpapi.CodeInvalidParameter, `filter "quantity:many": quantity is a number; "many" is not`},
		{"?filter=colour:red", 400, httpapi.CodeInvalidParameter, `InventoryItem has no field "colour"`},
		{"?limit=0", 400, httpapi.CodeInvalidParameter, "limit"},
		{"?limit=1001", 400, httpapi.CodeInvalidParameter, "limit"},
		{"?offset=-1", 400, httpapi.CodeInvalidParameter, "offset"},
		{"?offset=x", 400, httpapi.CodeInvalidParameter, "offset"},
		{"?order=sideways", 400, httpapi.CodeInvalidParameter, "order"},
		{"?session=no%20spaces", 400, httpapi.CodeInvalidParameter, "session"},
	}
	for _, tt := range tests {
		got := serve(t, s, req{method: "GET", path: "/__admin/records" + tt.query, auth: admin})
		if got.status != tt.status || got.Code != tt.code || !strings.Contains(fmt.Sprint(got.Message), tt.message) {
			t.Errorf("%s: %d %s; want %d %s with %q", tt.query, got.status, got.body, tt.status, tt.code, tt.message)
		}
	}
	for _, auth := range []string{"-", "Bearer " + testKey, "Bearer wrong"} {
		if got := serve(t, s, req{method: "GET", path: "/__admin/records", auth: auth}); got.status != 401 {
			t.Errorf("records with %q: %d; want 401", auth, got.status)
		}
	}
}

// TestUpdateRecord proves the dashboard's write is the contract's update:
// for every body, the admin operation and PATCH /v1/inventory/{petId}
// answer the same status and the same Error message.
func TestUpdateRecord(t *testing.T) {
	bodies := []struct{ contentType, body string }{
		{"", `{"quantity": 42}`},
		{"", `{"quantity": 5.0}`},
		{"", `{"quantity": -1}`},
		{"", `{"quantity": 3000000000}`},
		{"", `{"quantity": "many"}`},
		{"", `{"quantity": 1.5}`},
		{"", `{"quantity": null}`},
		{"", `{}`},
		{"", `{"quantity": 1, "quantity": 2}`},
		{"", `{"quantity": 7, "status": "sold", "note": "<script>"}`},
		{"", `{"petId": 4, "quantity": 7}`},
		{"", `{"quantity": 1`},
		{"text/plain", `{"quantity": 1}`},
	}
	for _, b := range bodies {
		t.Run(b.body, func(t *testing.T) {
			viaAPI, viaAdmin := newServer(t), newServer(t)
			api := serve(t, viaAPI, req{method: "PATCH", path: "/v1/inventory/3", contentType: b.contentType, body: b.body})
			admin := serve(t, viaAdmin, req{method: "PATCH", path: "/__admin/records/3", contentType: b.contentType, body: b.body})
			if admin.status != api.status || admin.Code != api.Code || fmt.Sprint(admin.Message) != fmt.Sprint(api.Message) {
				t.Errorf("admin answered %d %s;\nthe API answered %d %s", admin.status, admin.body, api.status, api.body)
			}
			if got, want := stored(t, viaAdmin, 3), stored(t, viaAPI, 3); got != want {
				t.Errorf("pet 3 after the admin write = %+v; after the API's = %+v", got, want)
			}
		})
	}
	s := newServer(t, func(c *Config) { c.JournalSize = 10 })
	if got := serve(t, s, req{method: "PATCH", path: "/__admin/records/999", body: `{"quantity": 1}`}); got.status != 404 || got.Message != "no record with petId 999" {
		t.Errorf("unknown pet: %d %s; want 404", got.status, got.body)
	}
	if got := serve(t, s, req{method: "PATCH", path: "/__admin/records/abc", body: `{"quantity": 1}`}); got.status != 400 || got.Code != httpapi.CodeInvalidParameter {
		t.Errorf("key abc: %d %s; want 400 invalid_parameter", got.status, got.body)
	}
	// A session, by query or header.
	serve(t, s, req{method: "PATCH", path: "/__admin/records/3?session=alice", body: `{"quantity": 11}`})
	serve(t, s, withHeader(req{method: "PATCH", path: "/__admin/records/4", body: `{"quantity": 12}`}, SessionHeader, "alice"))
	if _, got := records(t, s, "?session=alice&limit=4"); got[2].Quantity != 11 || got[3].Quantity != 12 {
		t.Errorf("alice's pets 3 and 4 = %+v; want quantities 11 and 12", got[2:])
	}
	if got := stored(t, s, 3); got.Quantity == 11 {
		t.Errorf("the default session's pet 3 was written: %+v", got)
	}
	// Chaos rules and Prefer are the API callers', not the dashboard's.
	if got := putChaos(t, s, `{"rules": [{"fault": "reset"}]}`); got.status != 200 {
		t.Fatalf("PUT chaos: %s", got.body)
	}
	got := serve(t, s, withHeader(req{method: "PATCH", path: "/__admin/records/3", body: `{"quantity": 13}`}, "Prefer", "code=404"))
	if got.status != 200 || stored(t, s, 3).Quantity != 13 {
		t.Errorf("admin write under a reset rule and Prefer: code=404: %d %s; want 200 and the write", got.status, got.body)
	}
	// The journal records the API's callers only.
	if e := journalOf(t, s, "?session=default"); len(e) != 0 {
		t.Errorf("journal = %+v; want no admin write in it", e)
	}
	// The admin key, not an API key, where one is set.
	s = newServer(t, func(c *Config) { c.AdminKey = "admin-key" })
	if got := serve(t, s, req{method: "PATCH", path: "/__admin/records/3", body: `{"quantity": 1}`}); got.status != 401 || got.Code != httpapi.CodeAdminKeyRequired {
		t.Errorf("API key on the admin write: %d %s; want 401 admin_key_required", got.status, got.body)
	}
}

func TestDescribeContract(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 25 })
	got := serve(t, s, req{method: "GET", path: "/__admin/contract"})
	var info contractInfo
	if err := json.Unmarshal(got.body, &info); err != nil || got.status != 200 {
		t.Fatalf("GET /__admin/contract: %d %s", got.status, got.body)
	}
	wantFields := []fieldInfo{
		{Name: "petId", Type: "integer", Key: true, Description: "Identifier of the animal the entry tracks."},
		{Name: "quantity", Type: "integer", Writable: true, Description: "Current stock count."},
		{Name: "status", Type: "string", Enum: statusOrder, Description: "Status of the pet."},
	}
	if info.Record.Name != "InventoryItem" || info.Record.Key != "petId" || fmt.Sprint(info.Record.Fields) != fmt.Sprint(wantFields) {
		t.Errorf("record = %+v;\nwant InventoryItem keyed by petId with %+v", info.Record, wantFields)
	}
	if info.Title != "Pet Store Inventory Service" || info.Version != "1.0.0" || info.BasePath != "/v1" || info.JournalSize != 25 {
		t.Errorf("contract = %q %q %q, journal %d", info.Title, info.Version, info.BasePath, info.JournalSize)
	}
	ops := map[string]operationInfo{}
	for _, op := range info.Operations {
		ops[op.Name] = op
	}
	list := ops["listInventory"]
	if fmt.Sprint(list.Examples) != "[{empty 200} {one-of-each 200}]" || fmt.Sprint(list.Statuses) != "[200 401]" {
		t.Errorf("listInventory = %+v; want its examples and statuses", list)
	}
	if op := ops["GET /pets/{petId}"]; !op.Deprecated || op.Method != http.MethodGet {
		t.Errorf("GET /pets/{petId} = %+v; want it deprecated", op)
	}
	if ops["updateInventory"].Stability != "experimental" || len(info.Faults) != len(faults) {
		t.Errorf("update = %+v, faults %v", ops["updateInventory"], info.Faults)
	}
}

// BenchmarkRecords100k measures a dashboard page over 100,000 pets:
// straight from the list; sorted (the first click on a column's header),
// on an early page and on the last; sorted and filtered, which decodes
// every record; and a key found ("Find petId").
func BenchmarkRecords100k(b *testing.B) {
	recs, err := fixtures.Generate(shape(b), 100_000, 1)
	if err != nil {
		b.Fatal(err)
	}
	s := newServer(b, func(c *Config) { c.Records = recs })
	for _, query := range []string{
		"?offset=50000&limit=50",
		"?sort=quantity&order=desc&offset=100&limit=50",
		"?sort=quantity&order=desc&offset=99900&limit=50",
		"?sort=quantity&order=desc&filter=status:sold&offset=100&limit=50",
		"?filter=petId:99999",
	} {
		b.Run(query, func(b *testing.B) {
			for b.Loop() {
				w := newDiscard()
				r, _ := http.NewRequest("GET", "/__admin/records"+query, nil)
				r.Header.Set("Authorization", "Bearer "+testKey)
				s.ServeHTTP(w, r)
				if w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}

// A discard is a ResponseWriter that keeps only the status.
type discard struct {
	header http.Header
	status int
}

func newDiscard() *discard                     { return &discard{header: http.Header{}} }
func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(status int)      { d.status = status }

// TestLeast checks the n least kept against a sort of every value added,
// for values added in order, in reverse and shuffled.
func TestLeast(t *testing.T) {
	const count = 1000
	shuffled := make([]int, count)
	for i := range shuffled {
		shuffled[i] = (i * 7919) % count // 7919 is prime: a permutation
	}
	inOrder, reversed := make([]int, count), make([]int, count)
	for i := range count {
		inOrder[i], reversed[i] = i, count-1-i
	}
	for name, values := range map[string][]int{"in order": inOrder, "reversed": reversed, "shuffled": shuffled} {
		for _, n := range []int{-1, 0, 1, 2, 50, 999, 1000, 1001} {
			l := &least[int]{compare: cmp.Compare[int], n: n}
			for _, v := range values {
				l.add(v)
			}
			want := slices.Sorted(slices.Values(values))
			if n >= 0 {
				want = want[:min(n, count)]
			}
			if got := l.sorted(); !slices.Equal(got, want) {
				t.Errorf("%s, n = %d: kept %d values %v...; want the %d least", name, n, len(got), got[:min(len(got), 5)], len(want))
			}
		}
	}
}
