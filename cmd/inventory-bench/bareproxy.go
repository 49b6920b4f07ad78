package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// runBareProxy serves the reference of the proxy scenarios (README.md,
// The proxy's cost): a bare httputil.ReverseProxy in front of the
// --proxy-to address, tuned as inventory-mock's proxy mode is (keep-alive
// pool, pooled copy buffers, GOGC=400), without checks or log. Its help
// goes to stdout; its errors are returned, for main to print.
func runBareProxy(ctx context.Context, args []string, stdout io.Writer) error {
	var o struct {
		Addr string `name:"addr" default:"127.0.0.1:8082" placeholder:"HOST:PORT" help:"host:port to listen on"`
		To   string `name:"proxy-to" placeholder:"URL" help:"the backend's URL, with its base path, such as http://127.0.0.1:8080/v1 (required)"`
		Key  string `name:"api-key" help:"ignored: the backend checks keys"`
	}
	if err := parseMode("inventory-bench bare-proxy", &o, nil, args, stdout,
		"Usage: inventory-bench bare-proxy --proxy-to URL [flags]\n\nServes a bare httputil.ReverseProxy in front of --proxy-to, the scale of the\nproxy-* scenarios (see inventory-bench --help).", ""); err != nil {
		return err
	}
	up, err := url.Parse(o.To)
	switch {
	case o.To == "":
		return cli.Usagef("--proxy-to: want the backend's URL, such as http://127.0.0.1:8080/v1")
	case err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "":
		return cli.Usagef("--proxy-to %q: want the backend's http or https URL, such as http://127.0.0.1:8080/v1", o.To)
	}
	debug.SetGCPercent(400)
	rp := &httputil.ReverseProxy{
		BufferPool: &buffers{pool: sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}},
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = up.Scheme, up.Host
			pr.Out.URL.Path = strings.TrimSuffix(up.Path, "/") + strings.TrimPrefix(pr.In.URL.Path, "/v1")
			pr.Out.URL.RawPath = ""
		},
		Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second}).DialContext,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 256,
			DisableCompression:  true,
			IdleConnTimeout:     90 * time.Second,
		},
	}
	return serve(ctx, o.Addr, rp)
}

// buffers lends the bare proxy its copy buffers.
type buffers struct{ pool sync.Pool }

func (b *buffers) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *buffers) Put(p []byte) { b.pool.Put(&p) }
