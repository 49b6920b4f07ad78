package chromiumtest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// A Tab is one headless Chromium with one tab, started for one test, that
// records every request the tab sends, every exception its scripts throw
// and every refusal of the page's Content-Security-Policy.
type Tab struct {
	Ctx context.Context // the tab's context, for chromedp.Run
	t   testing.TB

	mu         sync.Mutex // guards requests and exceptions
	requests   []*network.Request
	exceptions []string
}

// Open starts Chromium (Path: skipped or failed where there is none)
// with the flags this machine needs (its closed network refuses the
// connections Chromium makes in the background), a fresh profile and a
// temporary directory of the test's own (TempEnv), at width x height; the
// browser stops when the test ends.
func Open(t testing.TB, width, height int64) *Tab {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Path(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Env(TempEnv(t)),
		chromedp.WindowSize(int(width), int(height)),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tb := &Tab{t: t}
	ctx, cancel := chromedp.NewContext(alloc, chromedp.WithListener(tb.listen))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	tb.Ctx = ctx
	// The first run starts the browser and ties it to the context it is
	// given: this one, which lives as long as the test.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	tb.Do(
		chromedp.EmulateViewport(width, height),
		func(ctx context.Context, target *chromedp.Target) (chromedp.Void, error) {
			// Before any script of the page: scripts the protocol adds are
			// not subject to the page's policy.
			_, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
				Source: `window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`,
			})
			return chromedp.Void{}, err
		},
	)
	return tb
}

// listen runs in the tab's event loop: it only records.
func (tb *Tab) listen(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		tb.requests = append(tb.requests, e.Request)
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		tb.exceptions = append(tb.exceptions, text)
	}
}

// Do runs actions, failing the test on an error or after 20 s.
func (tb *Tab) Do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.Ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("chromium: %v", err)
	}
}

// Eval evaluates a JavaScript expression into v (nil: the value is not
// kept). The protocol's evaluation is not subject to the page's policy,
// which may forbid eval.
func (tb *Tab) Eval(expr string, v any) {
	tb.t.Helper()
	raw, err := chromedp.Run(tb.Ctx, chromedp.Evaluate[[]byte](expr))
	if err != nil {
		tb.t.Fatalf("evaluating %s: %v", expr, err)
	}
	if v != nil {
		if err := json.Unmarshal(raw, v); err != nil {
			tb.t.Fatalf("evaluating %s: %v: %s", expr, err, raw)
		}
	}
}

// Requests returns the requests the tab has sent since it opened, or
// since Forget.
func (tb *Tab) Requests() []*network.Request {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]*network.Request(nil), tb.requests...)
}

// Forget forgets the requests sent so far.
func (tb *Tab) Forget() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.requests = nil
}

// Exceptions returns what the page's scripts threw.
func (tb *Tab) Exceptions() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.exceptions...)
}

// Violations returns what the page's Content-Security-Policy refused, in
// the page loaded now.
func (tb *Tab) Violations() []string {
	tb.t.Helper()
	var v []string
	tb.Eval(`window.__violations`, &v)
	return v
}
