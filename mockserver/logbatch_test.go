package mockserver

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
)

// writes records each Write it gets, as the file under a logger would
// see them.
type writes struct {
	mu    sync.Mutex
	calls []string
}

func (w *writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls = append(w.calls, string(p))
	return len(p), nil
}

func (w *writes) get() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

// lineCount counts the log lines of one Write, and those with msg.
func lineCount(call, msg string) (lines, with int) {
	for _, l := range strings.SplitAfter(call, "\n") {
		if l == "" {
			continue
		}
		lines++
		if strings.Contains(l, "msg="+msg) {
			with++
		}
	}
	return lines, with
}

// TestBatchingLoggerKeepsOrder checks what a person reading the log
// sees: access lines held, then written in one piece before a warning
// that came after them, and at once after flush.
func TestBatchingLoggerKeepsOrder(t *testing.T) {
	var out writes
	logger, flush := httpapi.NewBatchingLogger(&out, false, time.Hour)
	s := newServer(t, func(c *Config) { c.Logger = logger })
	for range 3 {
		serve(t, s, req{method: "GET", path: "/v1/inventory"})
	}
	if got := out.get(); len(got) != 0 {
		t.Fatalf("access lines written within the window: %q", got)
	}
	logger.Warn("something to see")
	got := out.get()
	if len(got) != 2 {
		t.Fatalf("after a warning: %d writes %q; want the held lines, then the warning", len(got), got)
	}
	if n, req := lineCount(got[0], "request"); n != 3 || req != 3 {
		t.Errorf("first write: %d lines, %d access lines; want 3 access lines:\n%s", n, req, got[0])
	}
	if !strings.Contains(got[1], `msg="something to see"`) {
		t.Errorf("second write is not the warning: %q", got[1])
	}

	flush()
	serve(t, s, req{method: "GET", path: "/v1/inventory", auth: "Bearer wrong"})
	got = out.get()
	if len(got) != 3 || !strings.Contains(got[2], "status=401") {
		t.Errorf("after flush, an access line waits: writes %q", got)
	}
}

// TestBatchingLoggerWindow checks that held lines reach the file when the
// window ends without anything else written, and at once when they fill
// maxHeld.
func TestBatchingLoggerWindow(t *testing.T) {
	t.Run("window ends", func(t *testing.T) {
		var out writes
		logger, flush := httpapi.NewBatchingLogger(&out, false, 20*time.Millisecond)
		defer flush()
		s := newServer(t, func(c *Config) { c.Logger = logger })
		serve(t, s, req{method: "GET", path: "/v1/inventory"})
		serve(t, s, req{method: "GET", path: "/v1/inventory"})
		deadline := time.Now().Add(5 * time.Second)
		for len(out.get()) == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		got := out.get()
		if len(got) == 0 {
			t.Fatal("held lines never written")
		}
		lines := 0
		for _, c := range got {
			n, _ := lineCount(c, "request")
			lines += n
		}
		if lines != 2 || len(got) > 2 {
			t.Errorf("%d lines in %d writes; want 2 lines, in one write unless a window ended between them: %q", lines, len(got), got)
		}
	})
	t.Run("full", func(t *testing.T) {
		var out writes
		logger, flush := httpapi.NewBatchingLogger(&out, false, time.Hour)
		defer flush()
		s := newServer(t, func(c *Config) { c.Logger = logger })
		long := "/v1/inventory/" + strings.Repeat("9", maxLoggedPath-len("/v1/inventory/")) // plain, not cut
		n := 0
		for ; len(out.get()) == 0 && n < 2*(64<<10)/maxLoggedPath; n++ {
			serve(t, s, req{method: "GET", path: long})
		}
		got := out.get()
		if len(got) != 1 || len(got[0]) < 64<<10 {
			t.Fatalf("after %d requests: %d writes; want one of at least %d bytes: %.300q", n, len(got), 64<<10, got)
		}
	})
}
