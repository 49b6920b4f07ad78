package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
)

// lagging serves the list as it was lag ago, as a read replica does: a
// write is acknowledged at once and listed lag later.
func lagging(h http.Handler, lag time.Duration) http.Handler {
	type snapshot struct {
		at   time.Time
		body []byte
	}
	list := func() []byte {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
		r.Header.Set("Authorization", "Bearer "+exploreKey)
		h.ServeHTTP(rec, r)
		return rec.Body.Bytes()
	}
	var mu sync.Mutex // guards history
	history := []snapshot{{time.Time{}, list()}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" && r.Header.Get("Authorization") == "Bearer "+exploreKey {
			mu.Lock()
			body := history[0].body
			for _, s := range history {
				if time.Since(s.at) >= lag {
					body = s.body
				}
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
		h.ServeHTTP(w, r)
		if r.Method == http.MethodPatch {
			mu.Lock()
			history = append(history, snapshot{time.Now(), list()})
			mu.Unlock()
		}
	})
}

// quantityOf returns pet id's quantity as the mock holds it now.
func quantityOf(t *testing.T, h http.Handler, id int64) json.Number {
	t.Helper()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
	r.Header.Set("Authorization", "Bearer "+exploreKey)
	h.ServeHTTP(rec, r)
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	var items []struct {
		PetID    int64       `json:"petId"`
		Quantity json.Number `json:"quantity"`
	}
	if err := dec.Decode(&items); err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if it.PetID == id {
			return it.Quantity
		}
	}
	t.Fatalf("pet %d not listed", id)
	return ""
}

// TestRestoreHolds: a record written by the run is put back to its value
// before the run's first write, not to a stale read of it; the restore is
// read back until the lagging list shows it; a restore answered 500 is
// sent again; one that cannot hold names the value found and the value
// wanted.
func TestRestoreHolds(t *testing.T) {
	const lag = 300 * time.Millisecond
	for _, tc := range []struct {
		name string
		wrap func(http.Handler) http.Handler
		want string // "" for a restore that holds; else a substring of its error
	}{
		{"lagging reads", func(h http.Handler) http.Handler { return lagging(h, lag) }, ""},
		{"lagging reads, first restore answered 500", func(h http.Handler) http.Handler { return failFirstPatches(lagging(h, lag), 3) }, ""},
		{"writes after the first stick", func(h http.Handler) http.Handler { return storeFirstPatches(h, 2) }, "could not restore quantity 5: wanted quantity 5, found 222"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mockserver.New(mockserver.Config{APIKeys: []string{exploreKey}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(tc.wrap(m))
			t.Cleanup(srv.Close)
			tg, err := Prepare(context.Background(), Config{BaseURL: srv.URL + "/v1", APIKey: exploreKey, AllowMutations: true,
				RestoreDeadline: 2 * time.Second, Stderr: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			want := quantityOf(t, m, 1)
			ctx := context.Background()
			write := func(q string) {
				x := tg.Send(ctx, tg.Update(1, []byte(`{"quantity":`+q+`}`)))
				if x.Status != http.StatusOK && !strings.Contains(tc.name, "500") {
					t.Fatalf("PATCH quantity %s: %d", q, x.Status)
				}
			}
			// A check writes 111; the next one reads the list, which
			// still shows 111 after 222 was written.
			write("111")
			time.Sleep(lag + 50*time.Millisecond)
			write("222")
			ix, _ := DecodeList(ctx, tg.Send(ctx, Request{Method: http.MethodGet, Path: "/inventory"}).RespBody, "petId")
			tg.remember(1, ix.ByID[1])
			err = tg.restore(1)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("restore: %v", err)
			case tc.want == "":
				if got := quantityOf(t, m, 1); got != want {
					t.Errorf("quantity after the restore = %s; want %s, the value before the run's first write", got, want)
				}
			case err == nil || !strings.Contains(err.Error(), tc.want):
				t.Errorf("restore error = %v; want one containing %q", err, tc.want)
			}
		})
	}
}

// failFirstPatches answers the PATCHes after the first two 500 until n
// have been refused: the run's own writes get through, the restore meets
// a failing backend.
func failFirstPatches(h http.Handler, n int32) http.Handler {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			if k := seen.Add(1); k > 2 && k <= 2+n {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"code":"internal","message":"try again","status":500}`)
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// storeFirstPatches stores only the first n PATCHes and acknowledges the
// rest without storing them.
func storeFirstPatches(h http.Handler, n int32) http.Handler {
	var seen atomic.Int32
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch && seen.Add(1) > n {
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bytes.TrimSpace(b)) // an answer, not a store
			return
		}
		h.ServeHTTP(w, r)
	})
}
