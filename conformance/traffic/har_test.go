package traffic

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// TestHARRoundTrip writes exchanges with the HARWriter, reads them back
// and checks they give the same violations, secrets redacted.
func TestHARRoundTrip(t *testing.T) {
	c, _ := spec.Shared()
	check := NewChecker(c, nil)
	big := exchange("GET", "/v1/inventory", "", nil, 200, appJSON, "[")
	big.RespSize = 5 << 20
	xs := []*Exchange{
		exchange("GET", "/v1/inventory?api_key=hunter2-key", "", nil, 200, appJSON, `[{"petId":1,"quantity":1,"status":"lost"}]`),
		exchange("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 200, appJSON, `{"petId":3,"quantity":6,"status":"sold"}`),
		exchange("PATCH", "/v1/inventory/3", "\xff\xfe", nil, 400, appJSON, `{"code":"x","message":"m","status":400}`),
		big,
	}
	var b bytes.Buffer
	w, err := NewHARWriter(&b, "test", "1.0", nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, x := range xs {
		x.Time = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		x.URL = "https://staging.example.com" + x.Request.URL.RequestURI()
		x.Request.Header.Set("Authorization", "Bearer hunter2-token")
		if err := w.Write(x, 5*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		want = append(want, rulesOf(check.Check(x)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("hunter2")) {
		t.Fatalf("the HAR holds a secret:\n%s", &b)
	}
	base, _ := url.Parse("https://staging.example.com/v1")
	m := HARMapping{BasePath: "/v1", Base: base}
	var got []string
	err = ReadHAR(&b, func(e *HAREntry) error {
		x, why := m.Exchange(e)
		if x == nil {
			t.Errorf("entry %d skipped: %s", e.Index, why)
			return nil
		}
		got = append(got, rulesOf(check.Check(x)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("from the HAR:\n  %q\nlive:\n  %q", got, want)
	}
}

func rulesOf(vs []Violation) string {
	var s []string
	for _, v := range vs {
		s = append(s, v.Rule+" "+v.Path)
	}
	return strings.Join(s, ", ")
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
		e := &HAREntry{Method: tc.method, URL: tc.url, Status: tc.status, ReqHeader: map[string][]string{}, RespHeader: map[string][]string{}}
		x, why := tc.m.Exchange(e)
		switch {
		case tc.path == "" && (x != nil || !strings.Contains(why, tc.why)):
			t.Errorf("%s: %v, %q; want skipped: %q", tc.url, x, why, tc.why)
		case tc.path != "" && (x == nil || x.Request.URL.Path != tc.path):
			t.Errorf("%s: %v, %q; want the path %s", tc.url, x, why, tc.path)
		}
	}
	sent := &HAREntry{Method: "GET", URL: "https://x.test/v1/inventory", ReqHeader: map[string][]string{"Authorization": {"Bearer k"}}}
	if x, why := (HARMapping{BasePath: "/v1"}).Exchange(sent); x == nil || x.Status != 0 {
		t.Errorf("a request without an answer: %v, %q; want its request checked", x, why)
	}
	pre := &HAREntry{Method: "OPTIONS", URL: "https://x.test/v1/inventory", Status: 204,
		ReqHeader: map[string][]string{"Origin": {"https://app.test"}, "Access-Control-Request-Method": {"PATCH"}}}
	if x, why := (HARMapping{BasePath: "/v1"}).Exchange(pre); x != nil || why != "a CORS preflight" {
		t.Errorf("a preflight: %v, %q; want skipped", x, why)
	}
}

// FuzzReadHAR reads arbitrary documents: no panic, and every entry it
// gives can be mapped and checked.
func FuzzReadHAR(f *testing.F) {
	for _, s := range []string{
		`{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{"startedDateTime":"2026-11-01T00:00:00Z","request":{"method":"PATCH","url":"https://x.test/v1/inventory/3","headers":[{"name":"Authorization","value":"Bearer k"},{"name":":authority","value":"x"}],"postData":{"mimeType":"application/json","text":"{\"quantity\":1}"}},"response":{"status":200,"headers":[{"name":"content-type","value":"application/json"}],"content":{"size":44,"mimeType":"application/json","text":"{\"petId\":3,\"quantity\":1,\"status\":\"sold\"}"}}}]}}`,
		`{"log":{"entries":[{"request":{"method":"GET","url":"/v1/inventory"},"response":{"status":200,"content":{"size":10}}}]}}`,
		`{"log":{"pages":[{}],"entries":[{"request":{"method":"GET","url":"/v1/inventory"},"response":{"status":200,"content":{"text":"W10=","encoding":"base64"}}}]}}`,
		`{"log":{"entries":[{"request":{"method":"get","url":"http://[::1]/v1/inventory?a=%zz"},"response":{"status":999}}]}}`,
		`{"x":[],"log":{"entries":[]}}`,
		`{"log":{"entries":[null]}}`,
		`{"log":{"entries":[{"request":{"method":"GET","url":"/v1/inventory"},"response":{"status":200}}],"entries":[]}}`,
	} {
		f.Add([]byte(s))
	}
	c, err := spec.Shared()
	if err != nil {
		f.Fatal(err)
	}
	check := NewChecker(c, nil)
	findings := NewFindings(c, FindingsOptions{})
	m := HARMapping{BasePath: c.BasePath, Limit: 1 << 10}
	f.Fuzz(func(t *testing.T, doc []byte) {
		n := 0
		ReadHAR(bytes.NewReader(doc), func(e *HAREntry) error {
			n++
			if e.Index != n-1 || e.Method == "" || e.URL == "" {
				t.Fatalf("entry %+v", e)
			}
			if x, _ := m.Exchange(e); x != nil {
				rv := check.CheckRequest(x)
				findings.Record(x, rv.Name, append(rv.Violations, check.CheckResponse(x, rv)...))
			}
			return nil
		})
	})
}
