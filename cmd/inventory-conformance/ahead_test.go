package main

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// TestReadOnlyChecksOverlap: against a slow target, the read-only checks'
// requests go --workers at a time, not one after the other, so a target
// far away does not make the run as slow as the sum of its answers.
func TestReadOnlyChecksOverlap(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a run against a slow target")
	}
	tests := []struct {
		workers string
		want    func(max int) bool
		say     string
	}{
		{"1", func(max int) bool { return max == 1 }, "exactly 1"},
		{"4", func(max int) bool { return max >= 2 && max <= 4 }, "from 2 to 4"},
	}
	for _, tt := range tests {
		t.Run("workers "+tt.workers, func(t *testing.T) {
			var mu sync.Mutex // guards now and most
			now, most := 0, 0
			slow := func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					now++
					most = max(most, now)
					mu.Unlock()
					time.Sleep(20 * time.Millisecond)
					h.ServeHTTP(w, r)
					mu.Lock()
					now--
					mu.Unlock()
				})
			}
			url, _ := newMock(t, slow)
			code, out := runChild(t, "--base-url", url, "--explore-time", "0", "--workers", tt.workers)
			if code != cli.ExitOK || !strings.Contains(out, " 0 failed") {
				t.Fatalf("exit %d; want 0 and 0 failed\n%s", code, out)
			}
			mu.Lock()
			defer mu.Unlock()
			if !tt.want(most) {
				t.Errorf("--workers %s: at most %d requests in flight at once; want %s", tt.workers, most, tt.say)
			}
		})
	}
}
