// Package proxy is the validating contract proxy: an http.Handler that
// forwards every request under the contract's base path to a real
// backend and its answer back, and checks both against the contract as
// they pass (the contract's Judge, package spec). By default it changes
// nothing that passes; with Enforce it answers a request that breaks the
// contract 400 without forwarding it, and an answer that breaks it 502.
// What it checks and serves is in README.md.
package proxy

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// DefaultBodyLimit is the bytes of each body the proxy checks: 1 MiB.
const DefaultBodyLimit = 1 << 20

// BudgetBodies is how many bodies of the check limit the exchanges hold
// for the checks at once, by default: 64 MiB at the default limit.
const BudgetBodies = 64

// Config is what New needs to build a proxy.
type Config struct {
	Contract *spec.Contract // required
	// Upstream is the backend's address with its own base path, such as
	// https://staging.example.com/v1; the contract's base path maps to it.
	Upstream string
	// Transport talks to the backend; nil: NewTransport with defaults.
	Transport http.RoundTripper
	// Timeout ends an exchange when the backend sends nothing for this
	// long, before or during its answer. 0: DefaultTimeout.
	Timeout time.Duration
	// Enforce answers 400 to a request that breaks the contract and 502
	// to an answer that does, instead of passing them.
	Enforce bool
	// BodyLimit is the bytes of each body checked; 0: DefaultBodyLimit.
	BodyLimit int
	// Budget bounds the bytes all exchanges hold for the checks at once
	// (request and answer bodies as captured, answers decoded); a body
	// that finds it spent passes unchecked, with a warning. 0:
	// BudgetBodies times BodyLimit.
	Budget int64
	// Ignore leaves out violations of the rules it matches.
	Ignore spec.RuleFilter
	// Findings gets the violations; nil: a new one that redacts APIKeys
	// and AdminKey.
	Findings *spec.Findings
	// HAR, if not nil, gets every exchange the backend answered.
	HAR *exchange.HARWriter
	// AdminKey guards /__admin/violations; empty: any of APIKeys, or
	// httpapi.DevKey without those. The proxy checks no other key: the
	// backend does.
	AdminKey string
	APIKeys  []string
	Logger   *slog.Logger // nil: no logs
	// Metrics, if not nil, counts every exchange and violation, and is
	// served at GET /metrics behind the admin key.
	Metrics *metrics.Metrics
}

// A Proxy is the validating proxy as an http.Handler.
type Proxy struct {
	upstream *url.URL
	base     string // the contract's base path, such as /v1
	enforce  bool
	limit    int
	timeout  time.Duration
	judge    *spec.Judge
	findings *spec.Findings
	har      *exchange.HARWriter
	logger   *slog.Logger
	metrics  *metrics.Metrics // nil: none
	budget   *budget          // the bytes held for the checks at once
	rp       *httputil.ReverseProxy
	own      http.Handler // the proxy's own endpoints
	handler  http.Handler
}

// New builds a proxy from cfg.
func New(cfg Config) (*Proxy, error) {
	if cfg.Contract == nil {
		return nil, errors.New("proxy: Config.Contract is nil")
	}
	up, err := url.Parse(cfg.Upstream)
	if err != nil || (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" || up.RawQuery != "" || up.Fragment != "" {
		return nil, fmt.Errorf("proxy: upstream %q: want an http or https address such as https://staging.example.com/v1", cfg.Upstream)
	}
	up.Path = strings.TrimSuffix(up.Path, "/")
	up.RawPath = ""
	if err := httpapi.CheckEnvelope(cfg.Contract); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	limit := cmp.Or(max(cfg.BodyLimit, 0), DefaultBodyLimit)
	p := &Proxy{
		upstream: up, base: cfg.Contract.BasePath, enforce: cfg.Enforce, limit: limit,
		timeout: cmp.Or(max(cfg.Timeout, 0), DefaultTimeout), har: cfg.HAR,
		logger: cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		judge:  spec.NewJudge(cfg.Contract, cfg.Ignore), findings: cfg.Findings, metrics: cfg.Metrics,
		budget: &budget{size: cmp.Or(max(cfg.Budget, 0), BudgetBodies*int64(limit))},
	}
	keys := httpapi.NewKeys(cfg.APIKeys, cfg.AdminKey)
	rd := keys.Redactor
	if p.findings == nil {
		p.findings = spec.NewFindings(cfg.Contract, spec.FindingsOptions{Redactor: rd, KeyVar: exchange.APIKeyVar})
	}
	transport := cfg.Transport
	if transport == nil {
		if transport, err = NewTransport(TransportOptions{Timeout: p.timeout}); err != nil {
			return nil, err
		}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      transport,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamError,
		BufferPool:     newBufferPool(),
		ErrorLog:       slog.NewLogLogger(p.logger.Handler(), slog.LevelWarn),
	}
	adminDoc, err := spec.Admin()
	if err != nil {
		return nil, err
	}
	admin, err := httpapi.AdminMux(adminDoc, httpapi.ProxyTag, map[string]httpapi.Handler{
		"listViolations":  p.listViolations,
		"clearViolations": p.clearViolations,
	})
	if err != nil {
		return nil, err
	}
	own := http.NewServeMux()
	own.HandleFunc("GET /healthz", p.health)
	own.Handle("GET /openapi.yaml", httpapi.NewDocument(cfg.Contract.Raw, p.base))
	own.Handle("GET "+adminDoc.BasePath+"/openapi.yaml", httpapi.NewDocument(adminDoc.Raw, adminDoc.BasePath))
	own.Handle(adminDoc.BasePath+"/", httpapi.RequireAdminKey(keys.Admin, keys.API, admin))
	if p.metrics != nil {
		own.Handle("GET /metrics", httpapi.RequireAdminKey(keys.Admin, keys.API, p.metrics.Handler()))
	}
	own.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteError(w, r, http.StatusNotFound, httpapi.CodeNotFound,
			fmt.Sprintf("no such path: %s; the proxy forwards the paths under %s", r.URL.Path, p.base))
	})
	p.own = own
	p.handler = httpapi.Front{Logger: p.logger, Redactor: rd}.Serve(http.HandlerFunc(p.route))
	return p, nil
}

// ServeHTTP serves one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// Findings returns the violations the proxy has recorded.
func (p *Proxy) Findings() *spec.Findings { return p.findings }

// route forwards the paths under the contract's base path, as they came
// (no cleaning, no redirect), and serves the rest itself.
func (p *Proxy) route(w http.ResponseWriter, r *http.Request) {
	if path := r.URL.Path; p.base == "" || httpapi.Under(path, p.base) {
		p.forward(w, r)
		return
	}
	p.own.ServeHTTP(w, r)
}

// health answers liveness probes: the proxy serves; it does not ask the
// backend.
func (p *Proxy) health(w http.ResponseWriter, r *http.Request) {
	byOp, unknown := p.findings.Traffic()
	n := unknown
	for _, c := range byOp {
		n += c
	}
	httpapi.WriteValue(w, r, http.StatusOK, map[string]any{"status": "ok", "upstream": p.upstream.Redacted(), "exchanges": n, "groups": len(p.findings.List())})
}

// listViolations answers GET /__admin/violations, with its filters.
func (p *Proxy) listViolations(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	q := r.URL.Query()
	out := []spec.Finding{}
	for _, f := range p.findings.List() {
		if (q.Has("rule") && f.Rule != q.Get("rule")) || (q.Has("operation") && f.Operation != q.Get("operation")) ||
			(q.Has("severity") && f.Severity != q.Get("severity")) {
			continue
		}
		out = append(out, f)
	}
	httpapi.WriteValue(w, r, http.StatusOK, out)
}

// clearViolations answers DELETE /__admin/violations.
func (p *Proxy) clearViolations(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	p.findings.Clear()
	w.WriteHeader(http.StatusNoContent)
}
