package mockserver

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver/dashboard/chromiumtest"
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
