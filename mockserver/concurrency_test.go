package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites has many clients write and read at once over real
// connections. Each writer owns one pet and writes a rising sequence; all
// writers also fight over pet 1. No update may be lost or mixed: every
// owned pet ends at its writer's last value, pet 1 ends at one of the
// values sent to it, and every list a reader saw was a valid snapshot.
func TestConcurrentWrites(t *testing.T) {
	s := newServer(t)
	srv := httptest.NewServer(s)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 64

	const writers, rounds = 16, 25
	patch := func(petID int64, q int) (item, error) {
		r, _ := http.NewRequest("PATCH", fmt.Sprintf("%s/v1/inventory/%d", srv.URL, petID), strings.NewReader(fmt.Sprintf(`{"quantity":%d}`, q)))
		r.Header.Set("Authorization", "Bearer "+testKey)
		r.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(r)
		if err != nil {
			return item{}, err
		}
		defer resp.Body.Close()
		var it item
		if resp.StatusCode != 200 {
			return it, fmt.Errorf("PATCH %d: status %d", petID, resp.StatusCode)
		}
		return it, json.NewDecoder(resp.Body).Decode(&it)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds*2+64)
	shared := map[int64]bool{}
	var sharedMu sync.Mutex
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := int64(w + 2)
			for i := range rounds {
				q := w*1000 + i
				it, err := patch(own, q)
				if err == nil && (it.PetID != own || it.Quantity != int64(q)) {
					err = fmt.Errorf("PATCH %d with %d answered %+v", own, q, it)
				}
				if err != nil {
					errs <- err
				}
				sharedMu.Lock()
				shared[int64(q)] = true
				sharedMu.Unlock()
				if it, err := patch(1, q); err != nil || it.Quantity != int64(q) {
					errs <- fmt.Errorf("PATCH 1 with %d answered %+v, %v", q, it, err)
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				r, _ := http.NewRequest("GET", srv.URL+"/v1/inventory", nil)
				r.Header.Set("Authorization", "Bearer "+testKey)
				resp, err := client.Do(r)
				if err != nil {
					errs <- err
					continue
				}
				var items []item
				err = json.NewDecoder(resp.Body).Decode(&items)
				resp.Body.Close()
				if err != nil || len(items) != len(testItems(t)) {
					errs <- fmt.Errorf("list: %d items, %v", len(items), err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := range writers {
		if it := stored(t, s, int64(w+2)); it.Quantity != int64(w*1000+rounds-1) {
			t.Errorf("pet %d = %d; want its writer's last value %d", w+2, it.Quantity, w*1000+rounds-1)
		}
	}
	if it := stored(t, s, 1); !shared[it.Quantity] {
		t.Errorf("pet 1 = %d, a value nobody sent", it.Quantity)
	}
}

// TestForcedExamplesWhileTheJournalIsRead sends Prefer: example= answers
// on many connections while others read the journal, which renders those
// answers: under -race, an answer written into the example's own buffer,
// which every request shares, shows as a race.
func TestForcedExamplesWhileTheJournalIsRead(t *testing.T) {
	s := newServer(t, func(c *Config) { c.JournalSize = 20 })
	srv := httptest.NewServer(s)
	defer srv.Close()
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 16
	get := func(path string, header ...string) (int, []byte, error) {
		r, _ := http.NewRequest("GET", srv.URL+path, nil)
		r.Header.Set("Authorization", "Bearer "+testKey)
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(r)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, body, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 256)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			example := []string{"one-of-each", "empty"}[w%2]
			for range 30 {
				status, body, err := get("/v1/inventory", "Prefer", "example="+example)
				if err == nil && (status != 200 || !bytes.HasSuffix(body, []byte("]\n"))) {
					err = fmt.Errorf("example=%s: %d %q", example, status, body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				status, body, err := get("/__admin/requests?limit=20")
				if err == nil && status != 200 {
					err = fmt.Errorf("journal: %d %s", status, body)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
