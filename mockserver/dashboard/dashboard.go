// Package dashboard is the mock's web page: one HTML page rendered from a
// template, a style sheet, a script and an icon, all embedded in the
// binary. No build step, no library, nothing from another host, so it
// works offline and behind a proxy.
//
// The page holds no data: it asks for the admin key, keeps it in the
// tab's session storage, and reads and writes everything through the
// mock's admin API (spec/admin.yaml) with the key as a bearer token. So it
// is served without a key, and a browser without the key sees only the
// prompt.
package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed page.html assets
var files embed.FS

// ContentSecurityPolicy is the policy of the page and its assets: the
// page's own script, style and images, calls to its own origin, and
// nothing else: no inline script or style, no other host, no form
// submission, no framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"

// Config is what New needs.
type Config struct {
	// Base is the path the dashboard is served under, such as /__admin: the
	// page is Base+"/", the assets are under Base+"/assets/", and the
	// page calls the admin API under Base.
	Base string
	// Title is the contract's title, shown in the page's title.
	Title string
	// NotFound answers a request for an asset there is not.
	NotFound http.Handler
}

// A Dashboard serves the page and its assets.
type Dashboard struct {
	base     string
	page     []byte
	assets   map[string]asset // by name, such as dashboard.js
	notFound http.Handler
}

// An asset is an embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// contentTypes are the types of the assets, by extension; written here
// rather than read from the system's MIME tables, which differ between
// machines.
var contentTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
	".txt": "text/plain; charset=utf-8",
}

// New renders the page once and reads the assets.
func New(cfg Config) (*Dashboard, error) {
	tmpl, err := template.ParseFS(files, "page.html")
	if err != nil {
		return nil, err
	}
	var page bytes.Buffer
	if err := tmpl.Execute(&page, cfg); err != nil {
		return nil, err
	}
	d := &Dashboard{base: cfg.Base, page: page.Bytes(), assets: map[string]asset{}, notFound: cfg.NotFound}
	if d.notFound == nil {
		d.notFound = http.HandlerFunc(http.NotFound)
	}
	names, err := fs.Glob(files, "assets/*")
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		body, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		ct, ok := contentTypes[path.Ext(name)]
		if !ok {
			return nil, fmt.Errorf("dashboard: %s: no content type for its extension", name)
		}
		d.assets[path.Base(name)] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return d, nil
}

// ServeHTTP serves the page at Base+"/" and the assets under
// Base+"/assets/"; the caller routes only GET and HEAD here.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.URL.Path == d.base+"/" {
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(d.page))
		return
	}
	a, ok := d.assets[strings.TrimPrefix(r.URL.Path, d.base+"/assets/")]
	if !ok || !strings.HasPrefix(r.URL.Path, d.base+"/assets/") {
		d.notFound.ServeHTTP(w, r)
		return
	}
	// Revalidated on every load, so a new binary's page never runs an old
	// script; unchanged, it costs a 304.
	h.Set("Content-Type", a.contentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
