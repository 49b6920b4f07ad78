package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// TestHostileBodiesMemory runs the suite with --allow-mutations and the
// default --workers against targets that answer with bodies made to
// take memory, and measures the child's peak resident memory: 20 MB
// Error bodies to every request but the list, and PATCH answers that are
// gzip bombs (32 KiB that inflate to 32 MiB, past every cap). Only the list's answer may
// be read up to --max-response-bytes; the rest stops at 1 MiB, a capped
// body keeps its first 4 KiB alone, and the bytes read at once are
// bounded by the budget. Before, these took 754 MB and 428 MB (on a busy
// machine 761 MB and 395 MB); now about 55 MB. The bound tested is the
// one --help states, 256 MB, four times that under the race detector.
func TestHostileBodiesMemory(t *testing.T) {
	list := `[{"petId":1,"quantity":3,"status":"available"},{"petId":2,"quantity":4,"status":"sold"},{"petId":3,"quantity":5,"status":"pending"}]`
	errorBody := func(status int) []byte {
		return fmt.Appendf(nil, `{"code":"bad","message":"%s","status":%d}`, strings.Repeat("a", 20_000_000), status)
	}
	bad, unauthorized := errorBody(http.StatusBadRequest), errorBody(http.StatusUnauthorized)
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	fmt.Fprint(zw, `{"petId":1,"quantity":3,"status":"available","note":"`)
	chunk := bytes.Repeat([]byte{'a'}, 1<<20)
	for range 32 {
		_, _ = zw.Write(chunk)
	}
	_ = zw.Close()
	for _, tt := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"20 MB Error bodies", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			switch {
			case r.Header.Get("Authorization") != "Bearer "+testKey:
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write(unauthorized)
			case r.Method == http.MethodGet && r.URL.Path == "/v1/inventory":
				fmt.Fprint(w, list)
			default:
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(bad)
			}
		}},
		{"gzip-bomb PATCH answers", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.Method == http.MethodPatch {
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(bomb.Bytes())
				return
			}
			fmt.Fprint(w, list)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runMeasured(t, "--base-url", hostile(t, tt.h), "--allow-mutations", "--explore-time", "3s")
			if r.code != cli.ExitFailed || !strings.Contains(r.out, "response body too large: more than 1 MiB") {
				t.Fatalf("exit %d; want 1 and the capped answers reported\n%.3000s", r.code, r.out)
			}
			limit := int64(256 << 20)
			if raceDetector {
				limit *= 4
			}
			t.Logf("peak RSS %d MiB in %s", r.maxRSS>>20, r.took.Round(1e6))
			if r.maxRSS > limit {
				t.Errorf("peak RSS %d MiB; want under %d MiB", r.maxRSS>>20, limit>>20)
			}
		})
	}
}
