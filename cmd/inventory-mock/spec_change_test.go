package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRequiredFieldEndToEnd starts the mock on the variant of the contract
// whose InventoryItem requires an updatedAt, with generated records and
// with a fixtures file, and checks that the field is served and kept by a
// write.
func TestRequiredFieldEndToEnd(t *testing.T) {
	variant := filepath.Join("..", "..", "testdata", "specs", "required-updated-at.yaml")
	fx := filepath.Join(t.TempDir(), "fx.json")
	if err := os.WriteFile(fx, []byte(`[{"petId":3,"quantity":2,"status":"sold","updatedAt":"2026-03-04T05:06:07Z"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	do := func(method, url, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer inventory-dev-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, tt := range []struct {
		name string
		args []string
		pets int
		at   string // pet 3's updatedAt; "": any date-time
	}{
		{"generated", []string{"--generate", "10", "--seed", "4"}, 10, ""},
		{"from a fixtures file", []string{"--fixtures", fx}, 1, "2026-03-04T05:06:07Z"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs syncBuffer
			addr, _ := start(t, append([]string{"--spec", variant}, tt.args...), env(nil), &logs)
			base := "http://" + addr + "/v1/inventory"
			// The list's example one-of-each lacks updatedAt: the mock warns
			// and will not send it.
			if want := "example one-of-each does not match the contract ([0].updatedAt: required"; !strings.Contains(logs.String(), want) {
				t.Errorf("start-up log lacks %q:\n%s", want, logs.String())
			}
			req, _ := http.NewRequest("GET", base, nil)
			req.Header.Set("Authorization", "Bearer inventory-dev-key")
			req.Header.Set("Prefer", "example=one-of-each")
			if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
				t.Errorf("Prefer: example=one-of-each: %v %v; want 400", resp.StatusCode, err)
			} else {
				resp.Body.Close()
			}
			status, body := do("GET", base, "")
			var items []map[string]any
			if err := json.Unmarshal(body, &items); status != 200 || err != nil || len(items) != tt.pets {
				t.Fatalf("list: %d %s; want %d pets", status, body, tt.pets)
			}
			var at string
			for _, it := range items {
				s, ok := it["updatedAt"].(string)
				if !ok || !strings.HasPrefix(s, "20") {
					t.Fatalf("a pet without updatedAt: %v", it)
				}
				if it["petId"] == float64(3) {
					at = s
				}
			}
			if tt.at != "" && at != tt.at {
				t.Errorf("pet 3's updatedAt = %q; want %q from the fixtures", at, tt.at)
			}
			status, body = do("PATCH", base+"/3", `{"quantity": 4}`)
			if want := `"updatedAt":"` + at + `"`; status != 200 || !strings.Contains(string(body), want) || !strings.Contains(string(body), `"quantity":4`) {
				t.Errorf("PATCH: %d %s; want 200 with quantity 4 and %s kept", status, body, want)
			}
		})
	}
}
