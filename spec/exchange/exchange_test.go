package exchange

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestGotCutsLongBodies(t *testing.T) {
	x := Exchange{Status: 200, RespHeader: http.Header{}, RespBody: []byte(strings.Repeat("a", 5000) + "\x00\xff")}
	got := x.Got(nil)
	if !strings.Contains(got, "(5002 bytes in all)") || len(got) > 1000 {
		t.Errorf("Got = %d bytes, %q...; want a cut body and its size", len(got), got[:80])
	}
	x.RespBody = []byte("a\nb\x00\xff")
	if got := x.Got(nil); !strings.Contains(got, "a·b·\uFFFD") {
		t.Errorf("Got = %q; want control characters and invalid UTF-8 made printable", got)
	}
	x = Exchange{Status: 200, RespHeader: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, RespBody: []byte("[1,"), RespSize: 90,
		Failure: FailureCut, Err: "unexpected EOF", Elapsed: 1500 * time.Microsecond}
	if got, want := x.Got(nil), "200 OK, Content-Type \"application/json; charset=utf-8\", after 2ms (cut: unexpected EOF)\n          [1, ... (90 bytes in all)"; got != want {
		t.Errorf("Got =\n%s\nwant\n%s", got, want)
	}
	if x.MediaType() != "application/json" || !x.RespCut() || x.ReqCut() {
		t.Errorf("MediaType %q, RespCut %v, ReqCut %v", x.MediaType(), x.RespCut(), x.ReqCut())
	}
	x = Exchange{Failure: FailureNoAnswer, Err: "dial tcp 127.0.0.1:1: connection refused"}
	if got := x.Got(nil); got != "no response: dial tcp 127.0.0.1:1: connection refused" {
		t.Errorf("Got = %q", got)
	}
}

// TestGotHidesAKeyStraddlingTheCut: a peer echoes the key where Got cuts
// the body it shows; no piece of the key longer than a few bytes shows.
func TestGotHidesAKeyStraddlingTheCut(t *testing.T) {
	const key = "secretkey-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rd := apiKey(key)
	for n := 540; n <= 610; n++ {
		x := Exchange{Status: 200, RespHeader: http.Header{}, RespBody: []byte(strings.Repeat("a", n) + key + strings.Repeat("b", 1000))}
		got := x.Got(rd)
		for k := 4; k <= len(key); k++ {
			if strings.Contains(got, key[:k]) || strings.Contains(got, key[len(key)-k:]) {
				t.Errorf("key at byte %d: Got shows %d bytes of it:\n%s", n, k, got)
				break
			}
		}
	}
}

func TestQuote(t *testing.T) {
	if got := Quote("a\x1b[31m\xff"); got != "\"a\\x1b[31m\uFFFD\"" {
		t.Errorf("Quote = %s", got)
	}
}

func TestFirstLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"one line", "one line"},
		{"status: want 200\n\tgot 500", "status: want 200"},
		{"\nafter an empty line", ""},
	} {
		if got := FirstLine(tt.in); got != tt.want {
			t.Errorf("FirstLine(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}
