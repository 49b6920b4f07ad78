package conformance

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCurlHidesTheKey(t *testing.T) {
	const key = "k3y-s3cr3t"
	tests := []struct {
		name string
		x    Exchange
		want string
	}{
		{
			name: "bearer header",
			x:    Exchange{Method: "GET", URL: "https://h/v1/inventory", Header: http.Header{"Authorization": {"Bearer " + key}}},
			want: `curl -sS -i -X GET 'https://h/v1/inventory' -H "Authorization: Bearer $INVENTORY_API_KEY"`,
		},
		{
			name: "key in the query string",
			x:    Exchange{Method: "GET", URL: "https://h/v1/inventory?api_key=" + key, Header: http.Header{}},
			want: `curl -sS -i -X GET "https://h/v1/inventory?api_key=$INVENTORY_API_KEY"`,
		},
		{
			name: "shell characters around the key are escaped",
			x:    Exchange{Method: "GET", URL: "https://h/v1/x", Header: http.Header{"Authorization": {"Basic $`\"" + key}}},
			want: `curl -sS -i -X GET 'https://h/v1/x' -H "Authorization: Basic \$\` + "`" + `\"$INVENTORY_API_KEY"`,
		},
		{
			name: "single quote in a body",
			x:    Exchange{Method: "PATCH", URL: "https://h/v1/inventory/1", Header: http.Header{}, Body: []byte(`{"q":"it's"}`)},
			want: `curl -sS -i -X PATCH 'https://h/v1/inventory/1' --data-binary '{"q":"it'\''s"}'`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.x.rd = NewRedactor(key)
			if got := tt.x.Curl(); got != tt.want {
				t.Errorf("Curl() =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

func TestGotCutsLongBodies(t *testing.T) {
	x := Exchange{Status: 200, RespHead: http.Header{}, RespBody: []byte(strings.Repeat("a", 5000) + "\x00\xff")}
	got := x.Got()
	if !strings.Contains(got, "(5002 bytes in all)") || len(got) > 1000 {
		t.Errorf("Got() = %d bytes, %q...; want a cut body and its size", len(got), got[:80])
	}
	x.RespBody = []byte("a\nb\x00\xff")
	if got := x.Got(); !strings.Contains(got, "a·b·\uFFFD") {
		t.Errorf("Got() = %q; want control characters and invalid UTF-8 made printable", got)
	}
}

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

func TestErrorProblemsTable(t *testing.T) {
	tests := []struct {
		body string
		want string // a substring of the problems; empty: none
	}{
		{`{"code":"unauthorized","message":"no key","status":401}`, ""},
		{`{"code":"unauthorized","message":"no key","status":401,"extra":true}`, ""},
		{``, "want a JSON object"},
		{`null`, "want a JSON object"},
		{`[]`, "want a JSON object"},
		{`{"message":"no key","status":401}`, "code is missing"},
		{`{"code":"","message":"no key","status":401}`, "code is empty"},
		{`{"code":7,"message":"no key","status":401}`, "code is 7, want a string"},
		{`{"code":null,"message":"no key","status":401}`, "code is null, want a string"},
		{`{"code":"x","message":" ","status":401}`, "message is empty"},
		{`{"code":"x","message":"m"}`, "status is missing"},
		{`{"code":"x","message":"m","status":"401"}`, `status is "401", want an integer`},
		{`{"code":"x","message":"m","status":401.5}`, "want an integer"},
		{`{"code":"x","message":"m","status":400}`, "status is 400, want the HTTP status 401"},
	}
	for _, tt := range tests {
		x := &Exchange{Status: 401, RespBody: []byte(tt.body)}
		got := strings.Join(ErrorProblems(x), "; ")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("errorProblems(%s) = %q; want %q", tt.body, got, tt.want)
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
		leaks(fmt.Sprintf("the list with the key at byte %d", n), x.Want("a list")+strings.Join(tg.ResponseProblems(x), "\n"))
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
		leaks(fmt.Sprintf("the record with the key at byte %d of its status", n), x.Want("a record")+strings.Join(ps, "\n"))
	}
}
