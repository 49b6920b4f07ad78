package exchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// readAll reads a HAR document's entries, mapped by m.
func readAll(t *testing.T, doc []byte, m HARMapping) []*Exchange {
	t.Helper()
	var xs []*Exchange
	err := ReadHAR(bytes.NewReader(doc), func(e *HAREntry) error {
		x, why := m.Exchange(e)
		if x == nil {
			t.Errorf("entry %d skipped: %s", e.Index, why)
			return nil
		}
		xs = append(xs, x)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return xs
}

// TestHARRoundTrip writes exchanges of every Failure kind with the
// HARWriter and reads them back: the same exchanges, with the same
// failure, secrets redacted.
func TestHARRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	appJSON := http.Header{"Content-Type": {"application/json"}}
	xs := []*Exchange{
		{Method: "GET", URL: "/v1/inventory?api_key=hunter2-key&x=1", Status: 200, RespHeader: appJSON,
			RespBody: []byte(`[{"petId":1,"quantity":1,"status":"lost"}]`)},
		{Method: "PATCH", URL: "/v1/inventory/3", Body: []byte(`{"quantity":7}`), BodySize: 14, Status: 200, RespHeader: appJSON,
			RespBody: []byte(`{"petId":3,"quantity":6,"status":"sold","echo":"hunter2-token"}`)},
		{Method: "PATCH", URL: "/v1/inventory/3", Body: []byte("\xff\xfe"), BodySize: 2, Status: 400, RespHeader: appJSON,
			RespBody: []byte(`{"code":"x","message":"m","status":400}`)},
		{Method: "GET", URL: "/v1/inventory", Status: 200, RespHeader: appJSON, RespBody: []byte("["), RespSize: 5 << 20},
		{Method: "GET", URL: "/v1/inventory", Failure: FailureNoAnswer, Err: "dial tcp: connection refused"},
		{Method: "GET", URL: "/v1/inventory", Status: 200, RespHeader: appJSON, RespBody: []byte(`[{"petId":1,"quantity":1,"status":"sold"},{"pe`),
			RespSize: 400, Failure: FailureCut, Err: "unexpected EOF"},
		{Method: "GET", URL: "/v1/inventory", Status: 200, RespHeader: appJSON, RespBody: []byte(`[{"petId":1`), RespSize: 11,
			Failure: FailureCut, Err: "the backend stopped sending for 10s"},
		{Method: "GET", URL: "/v1/inventory", Status: 200, RespHeader: appJSON, RespBody: []byte(`[{"petId":1,"quantity":1,"sta`),
			RespSize: 1 << 20, Failure: FailureCapped, Err: "more than 28 bytes"},
		{Method: "PATCH", URL: "/v1/inventory/3", Body: []byte(`{"quantity":`), BodySize: 1 << 20, BodyEncoding: "br",
			Status: 413, RespHeader: http.Header{"Content-Encoding": {"br"}}, RespBody: []byte("\x1b\x00\xff"), RespEncoding: "br"},
		{Method: "GET", URL: "/v1/inventory", Status: 200, RespHeader: appJSON, RespSize: 50, RespNotRecorded: true},
	}
	var b bytes.Buffer
	w, err := NewHARWriter(&b, "test", "1.0", NewRedactor(Secret{"hunter2-key", apiVar}))
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		x.Time = t0.Add(time.Duration(i) * time.Second)
		x.Elapsed = 5 * time.Millisecond
		x.URL = "https://staging.example.com" + x.URL
		if x.Header == nil {
			x.Header = http.Header{}
		}
		x.Header.Set("Authorization", "Bearer hunter2-token")
		if err := w.Write(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(xs[0]); err == nil {
		t.Error("Write after Close succeeded")
	}
	if bytes.Contains(b.Bytes(), []byte("hunter2")) || !bytes.Contains(b.Bytes(), []byte(`"Bearer [REDACTED]"`)) {
		t.Fatalf("the HAR holds a secret, or hides that a Bearer token was sent:\n%s", &b)
	}
	var doc any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	base, _ := url.Parse("https://staging.example.com/v1")
	got := readAll(t, b.Bytes(), HARMapping{BasePath: "/api/v1", Base: base})
	if len(got) != len(xs) {
		t.Fatalf("%d exchanges read back; want %d", len(got), len(xs))
	}
	for i, x := range xs {
		g := got[i]
		wantPath := "/api" + strings.TrimPrefix(strings.Split(x.URL, "?")[0], "https://staging.example.com")
		if g.Method != x.Method || g.Path != wantPath || g.Status != x.Status || g.Failure != x.Failure || g.Err != x.Err ||
			g.RespCut() != x.RespCut() || g.ReqCut() != x.ReqCut() || !g.Time.Equal(x.Time) || g.Elapsed != x.Elapsed ||
			g.BodyEncoding != x.BodyEncoding || g.RespEncoding != x.RespEncoding || g.RespNotRecorded != x.RespNotRecorded ||
			g.Header.Get("Authorization") != "Bearer [REDACTED]" {
			t.Errorf("exchange %d read back as\n  %+v\nwritten\n  %+v", i, g, x)
		}
		if x.Status != 0 && (!bytes.Equal(g.RespBody, x.RespBody) && !strings.Contains(string(g.RespBody), Redacted) || g.MediaType() != x.MediaType()) {
			t.Errorf("exchange %d: body %q, %s; want %q, %s", i, g.RespBody, g.MediaType(), x.RespBody, x.MediaType())
		}
		if x.RespCut() && g.RespSize != x.RespSize || x.ReqCut() && g.BodySize != x.BodySize {
			t.Errorf("exchange %d: sizes %d, %d; want %d, %d", i, g.BodySize, g.RespSize, x.BodySize, x.RespSize)
		}
	}
	if g := got[5]; g.Status != 200 || !strings.HasPrefix(string(g.RespBody), `[{"petId":1,"quantity":1,"status":"sold"}`) {
		t.Errorf("the cut answer read back as %d %q; want what arrived", g.Status, g.RespBody)
	}
	if u := got[0].URL; u != "https://staging.example.com/v1/inventory?api_key=$INVENTORY_API_KEY&x=1" {
		t.Errorf("URL %s", u)
	}
}

// TestHARRedactsCutBodies: a body cut inside a secret leaves none of it,
// and a JSON body stays a document.
func TestHARRedactsCutBodies(t *testing.T) {
	const key = "secretkey-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	x := &Exchange{Method: "POST", URL: "http://h/v1/x", Header: http.Header{}, Body: []byte(`{"a":"e"}`), BodySize: 9,
		Status: 200, RespHeader: http.Header{}, RespBody: []byte(`{"a":"secretkey-ABCDEF`), RespSize: 1000}
	var b bytes.Buffer
	w, _ := NewHARWriter(&b, "test", "1", NewRedactor(Secret{key, ""}, Secret{"e", ""}))
	if err := w.Write(x); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got := readAll(t, b.Bytes(), HARMapping{BasePath: "/v1"})[0]
	if string(got.RespBody) != `{"a":"` || got.RespSize != 1000 || string(got.Body) != `{"a":"[REDACTED]"}` {
		t.Errorf("read back %q (%d bytes), %q", got.RespBody, got.RespSize, got.Body)
	}
}

func TestReadHARErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{``, "unexpected EOF"},
		{`{"log":`, "EOF"},
		{`[1,2]`, "not a HAR file"},
		{`{"log":{"version":"1.2"}}`, "not a HAR file"},
		{`{"log":{"entries":[{"request":{"method":"GET"}}]}}`, "entry 0: no request method or URL"},
		{`{"log":{"entries":[{"request":{"method":"GET","url":"/"},"response":{"status":-1}}]}}`, "not an HTTP status"},
		{`{"log":{"entries":[{"request":{"method":"GET","url":"/"},"response":{"status":200,"content":{"text":"!!","encoding":"base64"}}}]}}`, "response body"},
		{`{"log":{"entries":[{"request":{"method":"GET","url":"/","postData":{"text":"x","encoding":"rot13"}},"response":{"status":200}}]}}`, "request body"},
		{`{"log":{"entries":[]}} x`, "data after the document"},
		{`{"log":{"entries":[}}`, "not valid JSON"},
	} {
		err := ReadHAR(strings.NewReader(tc.doc), func(*HAREntry) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadHAR(%q) = %v; want an error with %q", tc.doc, err, tc.want)
		}
	}
	stop := errors.New("stop")
	if err := ReadHAR(strings.NewReader(`{"log":{"entries":[{"request":{"method":"GET","url":"/"},"response":{"status":200}}]}}`),
		func(*HAREntry) error { return stop }); err != stop {
		t.Errorf("the callback's error: %v", err)
	}
}

// TestReadHAROfBrowsers reads entries as browsers write them: status 0
// with _error, lower-case methods and header names, pseudo-headers, a
// body not recorded, base64 text, a text marked cut.
func TestReadHAROfBrowsers(t *testing.T) {
	doc := `{"log":{"entries":[
{"startedDateTime":"2026-11-01T00:00:00.5Z","time":12.5,"request":{"method":"get","url":"https://x.test/v1/inventory","headers":[{"name":":authority","value":"x"},{"name":"authorization","value":"Bearer k"}]},"response":{"status":0,"_error":"net::ERR_CONNECTION_REFUSED"}},
{"request":{"method":"GET","url":"https://x.test/v1/inventory"},"response":{"status":200,"content":{"size":10}}},
{"request":{"method":"POST","url":"/v1/x","postData":{"mimeType":"text/plain","text":"aGk=","encoding":"base64"}},"response":{"status":200,"content":{"size":50,"text":"[1,","_truncated":true}}}]}}`
	var es []*HAREntry
	if err := ReadHAR(strings.NewReader(doc), func(e *HAREntry) error { es = append(es, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if e := es[0]; e.Method != "GET" || e.Failure != FailureNoAnswer || e.Err != "net::ERR_CONNECTION_REFUSED" || e.Header.Get("Authorization") != "Bearer k" ||
		len(e.Header) != 1 || e.Elapsed != 12500*time.Microsecond || e.Time.Nanosecond() != 5e8 {
		t.Errorf("entry 0: %+v", e.Exchange)
	}
	if e := es[1]; !e.RespNotRecorded || e.Failure != FailureNone {
		t.Errorf("entry 1: %+v", e.Exchange)
	}
	if e := es[2]; string(e.Body) != "hi" || e.Header.Get("Content-Type") != "text/plain" || e.RespSize != 50 || !e.RespCut() {
		t.Errorf("entry 2: %+v", e.Exchange)
	}
}

func TestHARMapping(t *testing.T) {
	base, _ := url.Parse("https://api.example.com/inventory/v1")
	for _, tc := range []struct {
		m      HARMapping
		method string
		url    string
		status int
		path   string // "" for skipped
		why    string
	}{
		{HARMapping{BasePath: "/v1"}, "GET", "https://x.test/v1/inventory", 200, "/v1/inventory", ""},
		{HARMapping{BasePath: "/v1"}, "GET", "https://x.test/app.js", 200, "", "not under /v1"},
		{HARMapping{BasePath: "/v1", Base: base}, "GET", "https://api.example.com/inventory/v1/inventory?x=1", 200, "/v1/inventory", ""},
		{HARMapping{BasePath: "/v1", Base: base}, "GET", "https://other.example.com/inventory/v1/inventory", 200, "", "another host"},
		{HARMapping{BasePath: "/v1", Base: base}, "GET", "https://api.example.com/inventory/v10/x", 200, "", "not under"},
		{HARMapping{BasePath: "/v1"}, "GET", "https://x.test/v1/inventory", 0, "", "no answer recorded"}, // without request headers
		{HARMapping{BasePath: "/v1"}, "GET", "%zz", 200, "", "cannot be read"},
	} {
		e := &HAREntry{Exchange: Exchange{Method: tc.method, URL: tc.url, Status: tc.status, Header: http.Header{}, RespHeader: http.Header{}}}
		x, why := tc.m.Exchange(e)
		switch {
		case tc.path == "" && (x != nil || !strings.Contains(why, tc.why)):
			t.Errorf("%s: %v, %q; want skipped: %q", tc.url, x, why, tc.why)
		case tc.path != "" && (x == nil || x.Path != tc.path || x.URL != tc.url):
			t.Errorf("%s: %v, %q; want the path %s", tc.url, x, why, tc.path)
		}
	}
	sent := &HAREntry{Exchange: Exchange{Method: "GET", URL: "https://x.test/v1/inventory", Header: http.Header{"Authorization": {"Bearer k"}}}}
	if x, why := (HARMapping{BasePath: "/v1"}).Exchange(sent); x == nil || x.Status != 0 {
		t.Errorf("a request without an answer: %v, %q; want its request", x, why)
	}
	pre := &HAREntry{Exchange: Exchange{Method: "OPTIONS", URL: "https://x.test/v1/inventory", Status: 204,
		Header: http.Header{"Origin": {"https://app.test"}, "Access-Control-Request-Method": {"PATCH"}}}}
	if x, why := (HARMapping{BasePath: "/v1"}).Exchange(pre); x != nil || why != "a CORS preflight" {
		t.Errorf("a preflight: %v, %q; want skipped", x, why)
	}
	long := &HAREntry{Exchange: Exchange{Method: "POST", URL: "https://x.test/v1/x", Header: http.Header{}, Body: []byte("abcdef"), BodySize: 6,
		Status: 200, RespBody: []byte("123456"), RespSize: 6}}
	if x, _ := (HARMapping{BasePath: "/v1", Limit: 4}).Exchange(long); string(x.Body) != "abcd" || !x.ReqCut() || string(x.RespBody) != "1234" || !x.RespCut() || len(long.Body) != 6 {
		t.Errorf("a limit of 4: %+v", x)
	}
}

// FuzzReadHAR reads arbitrary documents: no panic, every entry it gives
// can be mapped, and written and read back as the same exchange.
func FuzzReadHAR(f *testing.F) {
	for _, s := range []string{
		`{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"2026-11-01T00:00:00Z","request":{"method":"PATCH","url":"https://x.test/v1/inventory/3","headers":[{"name":"Authorization","value":"Bearer k"},{"name":":authority","value":"x"}],"postData":{"mimeType":"application/json","text":"{\"quantity\":1}"}},"response":{"status":200,"headers":[{"name":"content-type","value":"application/json"}],"content":{"size":44,"mimeType":"application/json","text":"{\"petId\":3,\"quantity\":1,\"status\":\"sold\"}"}}}]}}`,
		`{"log":{"entries":[{"request":{"method":"GET","url":"/v1/inventory"},"response":{"status":200,"content":{"size":10}}}]}}`,
		`{"log":{"pages":[{}],"entries":[{"request":{"method":"GET","url":"/v1/inventory"},"response":{"status":200,"content":{"text":"W10=","encoding":"base64"}}}]}}`,
		`{"log":{"entries":[{"request":{"method":"get","url":"http://[::1]/v1/inventory?a=%zz"},"response":{"status":999}}]}}`,
		`{"log":{"entries":[{"request":{"method":"GET","url":"/v1/inventory","headers":[{"name":"a","value":"b"}]},"response":{"status":200,"_failure":"cut","_error":"EOF","content":{"size":9,"text":"[1,","_truncated":true}}}]}}`,
		`{"log":{"entries":[{"request":{"method":"GET","url":"/v1/inventory","headers":[{"name":"a","value":"b"}]},"response":{"status":0,"_error":"refused"}}]}}`,
		`{"x":[],"log":{"entries":[]}}`,
		`{"log":{"entries":[null]}}`,
		`{"log":{"entries":[{"request":{"method":"GET","url":"/v1/inventory"},"response":{"status":200}}],"entries":[]}}`,
	} {
		f.Add([]byte(s))
	}
	m := HARMapping{BasePath: "/v1", Limit: 1 << 10}
	f.Fuzz(func(t *testing.T, doc []byte) {
		n := 0
		_ = ReadHAR(bytes.NewReader(doc), func(e *HAREntry) error {
			n++
			if e.Index != n-1 || e.Method == "" || e.URL == "" {
				t.Fatalf("entry %+v", e)
			}
			x, _ := m.Exchange(e)
			if x == nil {
				return nil
			}
			var b bytes.Buffer
			w, _ := NewHARWriter(&b, "fuzz", "1", nil)
			if err := w.Write(x); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			err := ReadHAR(&b, func(back *HAREntry) error {
				y, why := m.Exchange(back)
				if y == nil || y.Method != strings.ToUpper(NewRedactor().For(x).String(x.Method)) || y.Status != x.Status ||
					y.Failure != x.Failure || y.RespCut() != x.RespCut() || y.ReqCut() != x.ReqCut() {
					t.Fatalf("%+v\nread back as %+v (%s)", x, y, why)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("the HAR written of %+v: %v\n%s", x, err, b.Bytes())
			}
			return nil
		})
	})
}
