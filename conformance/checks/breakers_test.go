package checks

// The building blocks of the broken servers: middleware that changes a
// request before the mock sees it or a response before the client does,
// and small helpers that talk to the mock directly.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// requests returns a wrapper that changes each request before the mock
// sees it.
func requests(f func(r *http.Request)) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r = r.Clone(r.Context())
			f(r)
			h.ServeHTTP(w, r)
		})
	}
}

// responses returns a wrapper that changes each response of the mock
// before the client sees it.
func responses(f func(r *http.Request, rec *httptest.ResponseRecorder)) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			f(r, rec)
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		})
	}
}

// errorBodies returns a wrapper that changes every Error body.
func errorBodies(f func(e map[string]any)) func(http.Handler) http.Handler {
	return responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
		if rec.Code >= 400 {
			rewriteJSON(rec, f)
		}
	})
}

// lists returns a wrapper that changes the items of each 200 list.
func lists(f func([]map[string]any) []map[string]any) func(http.Handler) http.Handler {
	return responses(func(r *http.Request, rec *httptest.ResponseRecorder) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/inventory" || rec.Code != http.StatusOK {
			return
		}
		var items []map[string]any
		if json.Unmarshal(rec.Body.Bytes(), &items) != nil || len(items) == 0 {
			return
		}
		rec.Body = bytes.NewBuffer(mustMarshal(f(items)))
	})
}

// copyRecorded writes a recorded response to w.
func copyRecorded(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// withLatency delays every request by d before the server sees it: a
// target d away.
func withLatency(d time.Duration) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// rewriteJSON decodes the recorded object body, lets f change it and
// writes it back.
func rewriteJSON(rec *httptest.ResponseRecorder, f func(map[string]any)) {
	var m map[string]any
	if json.Unmarshal(rec.Body.Bytes(), &m) != nil {
		return
	}
	f(m)
	rec.Body = bytes.NewBuffer(mustMarshal(m))
}

// patchNotPersisted answers a valid PATCH as if it were stored, and
// stores nothing.
func patchNotPersisted(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := patchedPet(r)
		var u struct{ Quantity *int64 }
		if ok && authorized(r) && json.Unmarshal(peekBody(r), &u) == nil && u.Quantity != nil && *u.Quantity >= 0 {
			if it, found := findItem(listItemsOf(h), id); found {
				it.Quantity = *u.Quantity
				writeJSON(w, http.StatusOK, it)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// lostUpdates keeps the latest quantity any client sent in one shared
// variable and, after a pause, writes that one: concurrent writers see each
// other's values.
func lostUpdates(h http.Handler) http.Handler {
	var mu sync.Mutex // guards latest
	var latest []byte
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := patchedPet(r); !ok || !authorized(r) {
			h.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		latest = peekBody(r)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		setBody(r, latest)
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// patchedPet returns the petId of a PATCH /v1/inventory/{petId}.
func patchedPet(r *http.Request) (int64, bool) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/inventory/")
	if r.Method != http.MethodPatch || !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil
}

// authorized reports whether r carries the test key as the mock accepts it.
func authorized(r *http.Request) bool {
	scheme, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.EqualFold(scheme, "Bearer") && tok == testKey
}

// peekBody reads r's body and puts it back.
func peekBody(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(r.Body)
	setBody(r, b)
	return b
}

func setBody(r *http.Request, b []byte) {
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
}

// serve makes a keyed request to the mock and returns the recording.
func serve(h http.Handler, method, path string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testKey)
	r.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

func listItemsOf(h http.Handler) []Item {
	var items []Item
	_ = json.Unmarshal(serve(h, http.MethodGet, "/v1/inventory", nil).Body.Bytes(), &items)
	return items
}

func listed(h http.Handler, id int64) bool {
	_, ok := findItem(listItemsOf(h), id)
	return ok
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(mustMarshal(v))
}

func writeError(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]any{"code": code, "message": http.StatusText(status), "status": status})
}

// An Item is a decoded record of the embedded contract, for the broken
// servers' own bookkeeping.
type Item struct {
	PetID    int64  `json:"petId"`
	Quantity int64  `json:"quantity"`
	Status   string `json:"status"`
}

// findItem returns the record of petId id in items.
func findItem(items []Item, id int64) (Item, bool) {
	for _, it := range items {
		if it.PetID == id {
			return it, true
		}
	}
	return Item{}, false
}

// mustMarshal encodes v, which cannot fail for the values used here.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// quantities matches a quantity written as an integer in a JSON body.
var quantities = regexp.MustCompile(`("quantity":\s*-?[0-9]+)([,}])`)

// decimalQuantities rewrites every quantity of a JSON answer with a
// fraction part, as a float column answers it: 7 becomes 7.0.
func decimalQuantities(rec *httptest.ResponseRecorder) {
	if !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		return
	}
	rec.Body = bytes.NewBuffer(quantities.ReplaceAll(rec.Body.Bytes(), []byte("${1}.0$2")))
}
