package main

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// runBaseline serves the baseline, the least a correct server could do on
// the two operations with net/http (README.md, How it measures), as a
// child process of inventory-bench. Its help goes to stdout; its errors
// are returned, for main to print.
func runBaseline(ctx context.Context, args []string, stdout io.Writer) error {
	var o struct {
		Addr     string `name:"addr" default:"127.0.0.1:8081" placeholder:"HOST:PORT" help:"host:port to listen on"`
		Key      string `name:"api-key" default:"${key}" placeholder:"KEY" help:"the accepted API key"`
		Generate int    `name:"generate" placeholder:"N" help:"serve N generated pets instead of the default fixtures"`
		Seed     uint64 `name:"seed" default:"1" placeholder:"SEED" help:"seed for --generate"`
	}
	if err := parseMode("inventory-bench baseline", &o, map[string]string{"key": benchKey}, args, stdout,
		"Usage: inventory-bench baseline [flags]\n\nServes the bare baseline (see inventory-bench --help).", ""); err != nil {
		return err
	}
	items, err := baselineItems(o.Generate, o.Seed)
	if err != nil {
		return err
	}
	return serve(ctx, o.Addr, newBaseline(items, o.Key))
}

// An item is the baseline's stock record: the three fields of the
// embedded contract's InventoryItem, in a struct, as a hand-written server
// of this contract would hold them.
type item struct {
	PetID    int64  `json:"petId"`
	Quantity int64  `json:"quantity"`
	Status   string `json:"status"`
}

// baselineItems returns the records the mock serves with the same flags,
// the embedded fixtures or n generated pets, as items.
func baselineItems(n int, seed uint64) ([]item, error) {
	c, err := spec.Shared()
	if err != nil {
		return nil, err
	}
	shape, err := fixtures.NewShape(c)
	if err != nil {
		return nil, err
	}
	var records []fixtures.Record
	if n > 0 {
		records, err = fixtures.Generate(shape, n, seed)
	} else {
		records, _, err = fixtures.Default(shape)
	}
	if err != nil {
		return nil, err
	}
	items := make([]item, len(records))
	for i, r := range records {
		if err := json.Unmarshal(r.JSON, &items[i]); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// A baseline is the bare handler.
type baseline struct {
	auth []byte

	mu    sync.RWMutex // guards items, index and list
	items []item
	index map[int64]int // petId to position in items
	list  []byte        // items encoded with encoding/json; nil after a write
}

func newBaseline(items []item, key string) http.Handler {
	items = slices.Clone(items)
	slices.SortFunc(items, func(a, b item) int { return cmp.Compare(a.PetID, b.PetID) })
	b := &baseline{auth: []byte("Bearer " + key), items: items, index: make(map[int64]int, len(items))}
	for i, it := range items {
		b.index[it.PetID] = i
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/inventory", b.serveList)
	mux.HandleFunc("PATCH /v1/inventory/{petId}", b.serveUpdate)
	return b.checkKey(mux)
}

func (b *baseline) checkKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), b.auth) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="inventory"`)
			writeBody(w, http.StatusUnauthorized, []byte(`{"code":"unauthorized","message":"API key is not valid","status":401}`+"\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveList writes the list, encoded once after each change: a correct
// server has to show updates, and the simplest one re-encodes lazily.
func (b *baseline) serveList(w http.ResponseWriter, r *http.Request) {
	b.mu.RLock()
	list := b.list
	b.mu.RUnlock()
	if list == nil {
		b.mu.Lock()
		if b.list == nil {
			b.list, _ = json.Marshal(b.items)
			b.list = append(b.list, '\n')
		}
		list = b.list
		b.mu.Unlock()
	}
	writeBody(w, http.StatusOK, list)
}

func (b *baseline) serveUpdate(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("petId"), 10, 64)
	var u struct {
		Quantity *int64 `json:"quantity"`
	}
	if err == nil {
		err = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&u)
	}
	if err != nil || u.Quantity == nil || *u.Quantity < 0 {
		writeBody(w, http.StatusBadRequest, []byte(`{"code":"invalid_body","message":"bad request","status":400}`+"\n"))
		return
	}
	b.mu.Lock()
	i, ok := b.index[id]
	var it item
	if ok {
		b.items[i].Quantity = *u.Quantity
		b.list = nil
		it = b.items[i]
	}
	b.mu.Unlock()
	if !ok {
		writeBody(w, http.StatusNotFound, []byte(`{"code":"not_found","message":"no such pet","status":404}`+"\n"))
		return
	}
	body, _ := json.Marshal(it)
	writeBody(w, http.StatusOK, append(body, '\n'))
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
