package mockserver

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
)

// browserPage calls two mocks from another origin: one that allows any
// origin, and one that allows only the page's origin, with credentials.
const browserPage = `<!doctype html><pre id="out">pending</pre><script>
const auth = {"Authorization": "Bearer %[1]s"};
(async () => {
  const out = [];
  const step = async (name, f) => { try { out.push(name + " " + await f()); } catch (e) { out.push(name + " error " + e); } };
  await step("list", async () => { const r = await fetch("%[2]s/v1/inventory", {headers: auth}); return r.status + " " + (await r.json()).length; });
  await step("patch", async () => {
    const r = await fetch("%[2]s/v1/inventory/3", {method: "PATCH", headers: {...auth, "Content-Type": "application/json"}, body: JSON.stringify({quantity: 99})});
    return r.status + " " + (await r.json()).quantity;
  });
  await step("unauthorized", async () => { const r = await fetch("%[2]s/v1/inventory"); return r.status + " " + (await r.json()).code + " " + r.headers.get("WWW-Authenticate"); });
  await step("credentials", async () => { const r = await fetch("%[3]s/v1/inventory", {headers: auth, credentials: "include"}); return r.status + " " + (await r.json()).length; });
  document.getElementById("out").textContent = out.join("\n");
})();
</script>`

// TestBrowser drives headless Chromium through a page on another origin
// that lists, updates and fails auth against the mock: CORS preflights,
// the Authorization header, readable 401 bodies and headers, and
// credentials for a configured origin. Without Chromium it skips, and in
// CI it fails (chromiumtest.Path).
func TestBrowser(t *testing.T) {
	chromium := chromiumtest.Path(t)
	// The page's body names the mocks, which need the page's origin first;
	// the handler reads it through an atomic, as Chromium's requests come
	// from another process.
	var body atomic.Pointer[string]
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, *body.Load())
	}))
	defer page.Close()
	anyOrigin := httptest.NewServer(newServer(t))
	defer anyOrigin.Close()
	oneOrigin := httptest.NewServer(newServer(t, func(c *Config) { c.CORSOrigins = []string{page.URL} }))
	defer oneOrigin.Close()
	html := fmt.Sprintf(browserPage, testKey, anyOrigin.URL, oneOrigin.URL)
	body.Store(&html)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", page.URL)
	cmd.Env = append(os.Environ(), chromiumtest.TempEnv(t))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	for _, want := range []string{
		"list 200 64",
		"patch 200 99",
		`unauthorized 401 unauthorized Bearer realm="inventory"`,
		"credentials 200 64",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page did not show %q; it showed:\n%s", want, dom[:min(len(dom), 600)])
		}
	}
}

// hostilePage is a page of another origin, open in the developer's
// browser while the mock runs as started by default: it knows the
// published key and tries to read the journal and to put a chaos rule
// that resets every connection, besides reading the list as a frontend
// page does.
const hostilePage = `<!doctype html><pre id="out">pending</pre><script>
const auth = {"Authorization": "Bearer %[1]s"};
(async () => {
  const out = [];
  const step = async (name, f) => { try { out.push(name + " " + await f()); } catch (e) { out.push(name + " refused " + e.name); } };
  await step("list", async () => { const r = await fetch("%[2]s/v1/inventory", {headers: auth}); return r.status + " " + (await r.json()).length; });
  await step("journal", async () => { const r = await fetch("%[2]s/__admin/requests", {headers: auth}); return r.status + " " + await r.text(); });
  await step("journal without a key", async () => { const r = await fetch("%[2]s/__admin/requests"); return r.status + " " + await r.text(); });
  await step("chaos", async () => {
    const r = await fetch("%[2]s/__admin/chaos", {method: "PUT", headers: {...auth, "Content-Type": "application/json"}, body: JSON.stringify({rules: [{fault: "reset"}]})});
    return r.status + " " + await r.text();
  });
  await step("reset, no-cors", async () => { const r = await fetch("%[2]s/__admin/reset", {method: "POST", mode: "no-cors", body: "x"}); return "sent " + r.type; });
  document.getElementById("out").textContent = out.join("\n");
})();
</script>`

// TestBrowserCannotDriveTheAdminAPI drives headless Chromium through a
// page on another origin (a second server, another port) against a mock
// started the default way: the page reads the contract's list as before,
// but cannot read the journal or put a chaos rule. Then, with Chromium
// resolving a name of the attacker's to 127.0.0.1 as DNS rebinding would,
// the mock's admin API refuses the request that names it.
func TestBrowserCannotDriveTheAdminAPI(t *testing.T) {
	chromium := chromiumtest.Path(t)
	var logs strings.Builder
	var logMu sync.Mutex
	s := newServer(t, func(c *Config) {
		c.JournalSize = 10
		c.Logger = slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logs}, nil))
	})
	mock := httptest.NewServer(s)
	defer mock.Close()
	serve(t, s, withHeader(req{method: "GET", path: "/v1/inventory"}, "X-Upstream-Token", "frontend-secret-7")) // what the journal would leak
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, hostilePage, testKey, mock.URL)
	}))
	defer page.Close()

	dom := dumpDOM(t, chromium, page.URL)
	for _, want := range []string{
		"list 200 64",
		"journal refused TypeError",
		"journal without a key refused TypeError",
		"chaos refused TypeError",
		"reset, no-cors sent opaque",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page did not show %q; it showed:\n%s", want, dom[:min(len(dom), 800)])
		}
	}
	if strings.Contains(dom, "frontend-secret-7") {
		t.Errorf("the page read the journal:\n%s", dom)
	}
	if rules := s.Chaos().Rules; len(rules) != 0 {
		t.Errorf("chaos rules in force after the page ran: %+v; want none", rules)
	}
	logMu.Lock()
	if !strings.Contains(logs.String(), "--admin-origin "+page.URL) {
		t.Errorf("the log does not say that %s was refused, and how to allow it:\n%s", page.URL, logs.String())
	}
	logMu.Unlock()

	// DNS rebinding: the attacker's name, resolved to the mock's address.
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(mock.URL, "http://"))
	rebound := dumpDOM(t, chromium, "http://rebind.evil.test:"+port+"/__admin/requests", "--host-resolver-rules=MAP rebind.evil.test 127.0.0.1")
	if !strings.Contains(rebound, httpapi.CodeHostNotAllowed) || strings.Contains(rebound, "frontend-secret-7") {
		t.Errorf("through a rebound name the page showed:\n%s\nwant the host_not_allowed Error", rebound[:min(len(rebound), 800)])
	}
}

// dumpDOM runs headless Chromium on url and returns the page's DOM once
// its scripts have run.
func dumpDOM(t *testing.T, chromium, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=10000", "--dump-dom"}, flags...)
	cmd := exec.CommandContext(ctx, chromium, append(args, url)...)
	cmd.Env = append(os.Environ(), chromiumtest.TempEnv(t))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return string(out)
}

// A lockedWriter is a writer shared by the mock's goroutines and the test.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
