package conformance

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 500 * time.Millisecond},
		{"0", 100 * time.Millisecond},
		{"2", 2 * time.Second},
		{"3600", 5 * time.Second},
		{"-5", 100 * time.Millisecond},
		{"99999999999999999999", 500 * time.Millisecond},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 100 * time.Millisecond},
		{"Wed, 21 Oct 2015 07:28:02 GMT", 2 * time.Second},
		{"Wed, 21 Oct 2015 08:28:00 GMT", 5 * time.Second},
	}
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	for _, tt := range tests {
		if got := retryAfter(tt.in, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %s; want %s", tt.in, got, tt.want)
		}
	}
}

// TestErrorProblemsTable checks what the Judge makes of a 401's Error
// body, rule by rule.
func TestErrorProblemsTable(t *testing.T) {
	tg, err := NewTarget(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		body string
		want string // the problems' rules; empty: none
	}{
		{`{"code":"unauthorized","message":"no key","status":401}`, ""},
		{`{"code":"unauthorized","message":"no key","status":401,"extra":true}`, ""},
		{``, "response-body-schema"},
		{`null`, "response-body-schema"},
		{`[]`, "response-body-schema"},
		{`{"message":"no key","status":401}`, "response-body-schema"},
		{`{"code":"","message":"no key","status":401}`, "error-field-empty"},
		{`{"code":7,"message":"no key","status":401}`, "response-body-schema"},
		{`{"code":null,"message":"no key","status":401}`, "response-body-schema"},
		{`{"code":"x","message":" ","status":401}`, "error-field-empty"},
		{`{"code":"x","message":"m"}`, "response-body-schema"},
		{`{"code":"x","message":"m","status":"401"}`, "response-body-schema"},
		{`{"code":"x","message":"m","status":401.5}`, "response-body-schema, error-status-mismatch"},
		{`{"code":"x","message":"m","status":400}`, "error-status-mismatch"},
	}
	list := tg.Inventory().List
	for _, tt := range tests {
		x := &Exchange{Op: list, Exchange: exchange.Exchange{Method: "GET", Status: 401, RespHeader: http.Header{"Content-Type": {"application/json"}}, RespBody: []byte(tt.body), RespSize: int64(len(tt.body))}}
		var rules []string
		for _, p := range tg.ErrorProblems(x) {
			if !slices.Contains(rules, string(p.Cause)) {
				rules = append(rules, string(p.Cause))
			}
		}
		if got := strings.Join(rules, ", "); got != tt.want {
			t.Errorf("ErrorProblems(%s) = %q; want %q", tt.body, got, tt.want)
		}
	}
}

// TestKeyStraddlingACut: a target echoes the key where the suite cuts what
// it shows (the 600 bytes of a body shown, the 4 KiB kept of a body past
// the cap, the 80 bytes of a value in a schema message). No piece of the
// key longer than a few bytes is shown.
func TestKeyStraddlingACut(t *testing.T) {
	const key = "secretkey-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var mu sync.Mutex // guards at
	at := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := at
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPatch { // a record whose status is the key: a schema message cuts it
			fmt.Fprintf(w, `{"petId":1,"quantity":2,"status":"%s%s"}`, strings.Repeat("s", n), key)
			return
		}
		body := `[{"petId":1,"quantity":2,"status":"sold","note":"` + strings.Repeat("a", n) + key + strings.Repeat("b", 10000) + `"}]`
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	tg, err := NewTarget(Config{BaseURL: srv.URL + "/v1", APIKey: key, MaxResponseBytes: 8192})
	if err != nil {
		t.Fatal(err)
	}
	leaks := func(what, s string) {
		t.Helper()
		for n := 6; n <= len(key); n++ {
			if strings.Contains(s, key[:n]) || strings.Contains(s, key[len(key)-n:]) {
				t.Errorf("%s shows %d bytes of the key:\n%s", what, n, s)
				return
			}
		}
	}
	offsets := []int{4060, 4070, 4080, 4090, 4095}
	for n := 540; n <= 600; n += 3 {
		offsets = append(offsets, n)
	}
	for _, n := range offsets {
		mu.Lock()
		at = n - len(`[{"petId":1,"quantity":2,"status":"sold","note":"`)
		mu.Unlock()
		x := tg.Send(context.Background(), Request{Method: "GET", Path: "/inventory"})
		leaks(fmt.Sprintf("the list with the key at byte %d", n), x.Want("a list")+strings.Join(texts(tg.ResponseProblems(x)), "\n"))
	}
	for _, n := range []int{40, 60, 70, 75, 79} {
		mu.Lock()
		at = n
		mu.Unlock()
		x := tg.Send(context.Background(), Request{Method: "PATCH", Path: "/inventory/1", Body: []byte(`{"quantity":2}`)})
		ps := tg.ResponseProblems(x)
		if len(ps) == 0 {
			t.Errorf("a status of %d bytes passed the schema", n+len(key))
		}
		leaks(fmt.Sprintf("the record with the key at byte %d of its status", n), x.Want("a record")+strings.Join(texts(ps), "\n"))
	}
}

// TestRateLimitPausesTheRun: requests in flight at once that meet a 429
// share one pause, so the allowance (--max-retry-wait) counts the time
// the run stood still, not that time once per request.
func TestRateLimitPausesTheRun(t *testing.T) {
	var mu sync.Mutex
	var limitedTo time.Time // the server answers 429 until then
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if limitedTo.IsZero() {
			limitedTo = time.Now().Add(200 * time.Millisecond)
		}
		limited := time.Now().Before(limitedTo)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if limited {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"code":"rate_limited","message":"slow down","status":429}`)
			return
		}
		io.WriteString(w, `[]`)
	}))
	defer srv.Close()
	tg, err := NewTarget(Config{BaseURL: srv.URL + "/v1", APIKey: "k", MaxRetryWait: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = tg.Send(context.Background(), Request{Method: "GET", Path: "/inventory"}).Status
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		if s != http.StatusOK {
			t.Errorf("request %d: status %d; want 200 after the pause", i, s)
		}
	}
	// One pause of 1 s (Retry-After), however many of the 16 met it.
	if w := tg.waited(); w < time.Second || w > 2*time.Second {
		t.Errorf("the run waited %s in all; want one pause of about 1s, not one per request", w)
	}
}

// gzipOf returns n bytes of 'a' gzip-compressed: a small body that
// inflates to n.
func gzipOf(t *testing.T, prefix string, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = io.WriteString(zw, prefix)
	_, _ = zw.Write(bytes.Repeat([]byte{'a'}, n))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestAnswerCaps: only the list's 2xx answer may be long. An Error or a
// record past ItemMaxBytes is cut there and fails as capped, naming the
// cap, however large --max-response-bytes is; a list up to the cap is
// read whole. What an exchange keeps of a capped body is the first 4 KiB
// in a copy of its own, not a window on the buffer it was read into.
func TestAnswerCaps(t *testing.T) {
	const big = 3 << 20
	list := `[{"petId":1,"quantity":2,"status":"sold","note":"` + strings.Repeat("n", big) + `"}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/inventory":
			_, _ = io.WriteString(w, list)
		case r.Method == http.MethodPatch:
			_, _ = fmt.Fprintf(w, `{"petId":1,"quantity":2,"status":"sold","note":"%s"}`, strings.Repeat("n", big))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = fmt.Fprintf(w, `{"code":"not_found","message":"%s","status":404}`, strings.Repeat("m", big))
		}
	}))
	defer srv.Close()
	tg, err := NewTarget(Config{BaseURL: srv.URL + "/v1", APIKey: "k", MaxResponseBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		req  Request
		want int64 // bytes read; 0: the whole body, not capped
	}{
		{"the list", Request{Method: http.MethodGet, Path: "/inventory"}, 0},
		{"an Error", Request{Method: http.MethodGet, Path: "/inventory/x"}, ItemMaxBytes + 1},
		{"a record", Request{Method: http.MethodPatch, Path: "/inventory/1", Body: []byte(`{"quantity":2}`)}, ItemMaxBytes + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := tg.Send(context.Background(), tt.req)
			switch {
			case tt.want == 0 && (x.Failure != "" || x.RespSize != int64(len(list))):
				t.Errorf("read %d bytes, failure %q %s; want the whole list of %d", x.RespSize, x.Failure, x.Err, len(list))
			case tt.want != 0 && (x.Failure != exchange.FailureCapped || x.RespSize != tt.want || !strings.Contains(x.Err, "more than 1 MiB (the cap on an answer other than the list's")):
				t.Errorf("read %d bytes, failure %q %q; want %d bytes read, capped, naming the 1 MiB cap", x.RespSize, x.Failure, x.Err, tt.want)
			case tt.want != 0 && (len(x.RespBody) > 4096 || cap(x.RespBody) > 4096):
				t.Errorf("a capped body keeps %d bytes in a buffer of %d; want at most 4 KiB of its own", len(x.RespBody), cap(x.RespBody))
			}
			if ps := tg.ResponseProblems(x); tt.want != 0 && len(ps) == 0 {
				t.Errorf("a capped answer passed its checks")
			}
		})
	}
}

// TestBytesInFlight: sixteen requests at once whose lists are gzip bombs
// (a few KiB that inflate past the cap) never hold more than the budget
// between them, twice the cap, and every one of them ends, capped.
func TestBytesInFlight(t *testing.T) {
	const limit = 1 << 20
	bomb := gzipOf(t, `[{"petId":1,"quantity":2,"status":"sold","note":"`, 8<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(bomb)
	}))
	defer srv.Close()
	tg, err := NewTarget(Config{BaseURL: srv.URL + "/v1", APIKey: "k", MaxResponseBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	xs := make([]*Exchange, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			xs[i] = tg.Send(context.Background(), Request{Method: http.MethodGet, Path: "/inventory"})
		}()
	}
	wg.Wait()
	for i, x := range xs {
		if x.Failure != exchange.FailureCapped || x.RespSize != limit+1 {
			t.Errorf("request %d: read %d bytes, failure %q %s; want %d bytes, capped", i, x.RespSize, x.Failure, x.Err, limit+1)
		}
		if cap(x.RespBody) > 4096 {
			t.Errorf("request %d: a capped body is kept in a buffer of %d bytes; want its first 4 KiB alone", i, cap(x.RespBody))
		}
	}
	if peak, size := tg.inFlight.peak.Load(), tg.inFlight.size(); peak > size || peak < limit {
		t.Errorf("%d bytes in flight at most; want between one cap (%d) and the budget (%d)", peak, limit, size)
	}
	if tg.inFlight.held != 0 || len(tg.inFlight.big) != 0 {
		t.Errorf("after the reads the budget holds %d bytes (big taken: %d); want none", tg.inFlight.held, len(tg.inFlight.big))
	}
}
