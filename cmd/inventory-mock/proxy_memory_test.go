package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// TestProxyBombsMemory runs the proxy in a child process while 128
// clients at once get gzip bombs through it for 3 s (1 MB that inflates
// past the check limit), and measures the child's peak resident memory
// (VmHWM). The budget of bytes held for the checks and the soft memory
// limit keep it near 220 MB (524 MB under the race detector); without
// them it reached 648 MB. The bound tested is 400 MB, four times that
// under the race detector.
func TestProxyBombsMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	if _, err := cli.PeakRSS("self"); err != nil {
		t.Skipf("peak memory cannot be read: %v", err)
	}
	// 900 KB that do not compress, then 16 MiB that do: a body of about
	// 1 MB, just under the check limit, that decodes past it.
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	noise := make([]byte, 900_000)
	_, _ = rand.NewChaCha8([32]byte{}).Read(noise)
	_, _ = zw.Write(noise)
	_, _ = zw.Write(bytes.Repeat([]byte{'['}, 16<<20))
	_ = zw.Close()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb.Bytes())
	}))
	defer backend.Close()
	c := startChild(t, "--proxy-to", backend.URL+"/v1")
	const clients = 128
	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	var mu sync.Mutex // guards answers
	answers := 0
	end := time.Now().Add(3 * time.Second)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				req, _ := http.NewRequest(http.MethodGet, "http://"+c.addr+"/v1/inventory", nil)
				req.Header.Set("Authorization", "Bearer k")
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != int64(bomb.Len()) {
					t.Errorf("a client got %d bytes; want the bomb's %d as sent", n, bomb.Len())
					return
				}
				mu.Lock()
				answers++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	peak, err := cli.PeakRSS(strconv.Itoa(c.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d clients, %d answers in 3s: peak RSS %d MiB", clients, answers, peak>>20)
	limit := int64(400 << 20)
	if raceEnabled {
		limit *= 4
	}
	if peak > limit {
		t.Errorf("peak RSS %d MiB; want under %d MiB", peak>>20, limit>>20)
	}
}
