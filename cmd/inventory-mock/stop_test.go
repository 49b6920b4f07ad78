package main

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProxyStopWithARequestInFlight stops the proxy with SIGTERM while a
// PATCH waits on a backend that takes 25 s to answer: the stop cuts it
// after --shutdown-grace, names it in the log and in every report, writes
// every report, and exits with the gate's status (1 with
// --fail-on-violation after a violation, else 0), well before the backend
// would have answered.
func TestProxyStopWithARequestInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops child processes")
	}
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			io.Copy(io.Discard, r.Body) // so that the server sees the proxy go away
			select {                    // a slow backend: 25 s, or until the proxy gives up
			case <-time.After(25 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"petId":1,"quantity":1,"status":"lost"}]`) // "lost": a violation
	}))
	t.Cleanup(backend.Close)
	for _, tt := range []struct {
		name string
		gate []string
		exit int
	}{
		{"--fail-on-violation after a violation", []string{"--fail-on-violation"}, 1},
		{"no gate", nil, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			reports := map[string]string{
				"--junit-report":    filepath.Join(dir, "junit.xml"),
				"--markdown-report": filepath.Join(dir, "proxy.md"),
				"--html-report":     filepath.Join(dir, "proxy.html"),
				"--report-jsonl":    filepath.Join(dir, "v.jsonl"),
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			args := append([]string{"--addr", addr, "--proxy-to", backend.URL + "/v1", "--api-key", backendKey, "--shutdown-grace", "1s"}, tt.gate...)
			for f, path := range reports {
				args = append(args, f, path)
			}
			var logs syncBuffer
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), childEnv+"=1")
			cmd.Stdout, cmd.Stderr = io.Discard, &logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the proxy did not start:\n%s", logs.String())
				}
				if code, _ := tryGet("http://"+addr+"/v1/inventory", backendKey); code == 200 {
					break // one exchange with a violation
				}
			}
			patched := make(chan error, 1)
			go func() {
				req, _ := http.NewRequest("PATCH", "http://"+addr+"/v1/inventory/1", strings.NewReader(`{"quantity":3}`))
				req.Header.Set("Authorization", "Bearer "+backendKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
				if err == nil {
					resp.Body.Close()
				}
				patched <- err
			}()
			time.Sleep(300 * time.Millisecond) // the PATCH waits on the backend
			begin := time.Now()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(15 * time.Second):
				t.Fatalf("the proxy did not exit within 15 s of SIGTERM:\n%s", logs.String())
			}
			took := time.Since(begin)
			<-patched
			if code := cmd.ProcessState.ExitCode(); code != tt.exit {
				t.Errorf("exit status %d after SIGTERM with a request in flight; want %d (the gate's):\n%s", code, tt.exit, logs.String())
			}
			if took > 8*time.Second {
				t.Errorf("the stop took %v; want about --shutdown-grace 1s", took)
			}
			if log := logs.String(); !strings.Contains(log, "request cut at shutdown") || !strings.Contains(log, "path=/v1/inventory/1") || strings.Contains(log, "context deadline exceeded") {
				t.Errorf("the log does not name the cut request (or says context deadline exceeded):\n%s", log)
			}
			for f, path := range reports {
				b, err := os.ReadFile(path)
				switch {
				case err != nil || len(b) == 0:
					t.Errorf("%s: %d bytes, %v; want the report written", f, len(b), err)
				case f != "--report-jsonl" && !strings.Contains(string(b), "PATCH /v1/inventory/1, cut after"):
					t.Errorf("%s does not name the cut request:\n%s", f, b)
				case f != "--report-jsonl" && !strings.Contains(string(b), "lost"):
					t.Errorf("%s lacks the violation seen before the stop:\n%s", f, b)
				}
			}
		})
	}
}

// tryGet is get without failing the test: 0 where nothing answered.
func tryGet(url, key string) (int, string) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
