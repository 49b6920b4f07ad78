package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// runBareProxy serves the reference of the proxy scenarios: a bare
// httputil.ReverseProxy in front of the --proxy-to address, tuned as
// inventory-mock's proxy mode is (keep-alive pool, pooled copy buffers,
// GOGC=400) and doing nothing else (no checks, no log). What the
// validating proxy costs beyond it is the cost of its checks and log; what
// the bare proxy costs is the cost of one more HTTP hop.
func runBareProxy(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("inventory-bench bare-proxy", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8082", "`host:port` to listen on")
	to := fs.String("proxy-to", "", "the backend's `URL`, with its base path, such as http://127.0.0.1:8080/v1")
	fs.String("api-key", "", "ignored: the backend checks keys")
	if err := fs.Parse(args); err != nil {
		return err
	}
	up, err := url.Parse(*to)
	if err != nil || up.Host == "" {
		return errors.New("--proxy-to: want the backend's URL")
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
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rp, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// buffers lends the bare proxy its copy buffers.
type buffers struct{ pool sync.Pool }

func (b *buffers) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *buffers) Put(p []byte) { b.pool.Put(&p) }
