package dashboard_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
)

// The keys of the mocks under test. The admin key is not an API key, as
// with --admin-key.
const (
	adminKey = "admin-key-for-the-dashboard-test"
	apiKey   = "api-key-for-the-dashboard-test"
)

// startMock serves a mock of the embedded contract and its 64 fixture
// pets on loopback; wrap, if given, wraps its handler, and records, if
// given, replaces the fixtures.
func startMock(t *testing.T, wrap func(http.Handler) http.Handler, records ...fixtures.Record) (*mockserver.Server, *httptest.Server) {
	t.Helper()
	return mockserver.StartTest(t, mockserver.Config{Records: records, APIKeys: []string{apiKey}, AdminKey: adminKey, JournalSize: mockserver.DefaultJournalSize}, wrap)
}

// A tab is the dashboard open in one headless Chromium
// (chromiumtest.Tab), started for one test.
type tab struct {
	*chromiumtest.Tab
	t *testing.T
}

// openTab starts Chromium at 1280x800.
func openTab(t *testing.T) *tab {
	t.Helper()
	return &tab{Tab: chromiumtest.Open(t, 1280, 800), t: t}
}

// text evaluates a JavaScript expression that gives a string.
func (tb *tab) text(expr string) string {
	tb.t.Helper()
	var s string
	tb.Eval(expr, &s)
	return s
}

// waitFor evaluates expr until it is true; after 10 s it fails the test,
// saying what it waited for and what the page showed. chromedp's Poll
// builds its predicate with new Function, which the page's policy
// forbids, so this polls from Go.
func (tb *tab) waitFor(what, expr string) {
	tb.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var ok bool
		tb.Eval("!!("+expr+")", &ok)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("waited 10 s for %s (%s); the page shows:\n%s", what, expr, tb.text(`document.body.innerText.slice(0, 1500)`))
		}
		time.Sleep(40 * time.Millisecond)
	}
}

// checkClean fails the test if a script threw, the policy refused
// anything, or a request left the mock's origin.
func (tb *tab) checkClean(origin string) {
	tb.t.Helper()
	if exceptions := tb.Exceptions(); len(exceptions) > 0 {
		tb.t.Errorf("the page's scripts threw: %v", exceptions)
	}
	if violations := tb.Violations(); len(violations) > 0 {
		tb.t.Errorf("the Content-Security-Policy refused: %v", violations)
	}
	for _, r := range tb.Requests() {
		if !strings.HasPrefix(r.URL, origin+"/") {
			tb.t.Errorf("the page sent a request to another origin: %s %s", r.Method, r.URL)
		}
	}
}

// screenshot captures the viewport; it writes it to testdata when
// UPDATE_SCREENSHOT=1 (the READMEs' picture), and to DASHBOARD_SHOTS, a
// folder, when that is set, for a look at every layout.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	png, err := chromedp.Run(tb.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		tb.t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 1000 {
		tb.t.Fatalf("screenshot: %d bytes", len(png))
	}
	if name == "dashboard.png" && os.Getenv("UPDATE_SCREENSHOT") == "1" {
		if err := os.WriteFile(filepath.Join("testdata", name), png, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
	if dir := os.Getenv("DASHBOARD_SHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
}

// call sends one request to the mock from outside the page, as the app
// under development would.
func call(t *testing.T, srv *httptest.Server, method, path, body string, header ...string) (int, string) {
	t.Helper()
	r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Authorization", "Bearer "+apiKey)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// js quotes a Go string for JavaScript.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// logIn opens the dashboard and gives it the admin key.
func (tb *tab) logIn(srv *httptest.Server) {
	tb.t.Helper()
	tb.Do(chromedp.Navigate(srv.URL + "/__admin/"))
	tb.waitFor("the key prompt", `document.activeElement && document.activeElement.id === 'key'`)
	tb.Do(chromedp.SendKeys(chromedp.ID("key"), adminKey+kb.Enter))
	tb.waitFor("the dashboard", `!document.getElementById('app').hidden && document.querySelectorAll('#records-body tr[data-key]').length > 0`)
}

// choose picks an option of a select, as a person would: the select
// changes, and says so.
func (tb *tab) choose(id, value string) {
	tb.t.Helper()
	var options []string
	tb.Eval(`[...document.getElementById(`+js(id)+`).options].map(o => o.value)`, &options)
	if !slices.Contains(options, value) {
		tb.t.Fatalf("select #%s has no option %q; it has %q", id, value, options)
	}
	tb.Do(chromedp.Focus(chromedp.ID(id)), chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById(`+js(id)+`);
		s.value = `+js(value)+`; s.dispatchEvent(new Event('change', {bubbles: true})); })()`))
}
