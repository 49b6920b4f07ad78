// Package mockserver is the stateful mock of the Pet Store Inventory
// Service: an http.Handler that serves the contract's operations from a
// Store, checks the bearer key, validates every request against the
// contract, and answers every error with the contract's Error body. The
// steps a request passes, in order, are in README.md ("The request chain").
package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/dashboard"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// Config is what New needs to build a mock. Its zero value is the mock on
// its embedded defaults: the embedded contract and fixtures, the
// development key, no journal.
type Config struct {
	// Contract is the document served; nil: the embedded contract.
	Contract *spec.Contract
	// Shape is what a record is; nil: read from Contract.
	Shape *fixtures.Shape
	// Store keeps the records; nil: a Memory store of Records.
	Store store.Store
	// Records are the fixtures of the Memory store made when Store is nil;
	// nil: the embedded fixtures (an empty, non-nil slice: no records).
	Records []fixtures.Record
	// Sessions bounds the sessions of the Memory store made from Records,
	// of the journal, and of the sessions' own chaos rules and rate limits.
	Sessions store.Options
	// RequireSession refuses, with a 400, a request of the contract that
	// names no session (by the mock-session cookie, the X-Mock-Session
	// header or the mock-session query parameter), so that no test writes
	// into the default session by mistake. /healthz and the admin API are
	// not affected.
	RequireSession bool
	APIKeys        []string     // empty: only httpapi.DevKey
	AdminKey       string       // empty: admin endpoints take an API key
	CORSOrigins    []string     // empty or "*": any origin, without credentials
	Logger         *slog.Logger // nil: no logs
	// AdminOrigins are the browser origins whose pages may call the admin
	// API under /__admin/, besides the dashboard it serves itself; empty:
	// none. The contract's operations follow CORSOrigins.
	AdminOrigins []string
	// AllowedHosts are the host names the admin API answers for besides
	// localhost and IP addresses (httpapi.Hosts); "*": any.
	AllowedHosts []string

	// MaxDelay caps a Prefer delay and a chaos latency; 0: DefaultMaxDelay.
	MaxDelay time.Duration
	// Chaos is the latency and faults in force at start-up.
	Chaos Chaos
	// JournalSize is the number of requests the journal keeps per session;
	// 0: no journal.
	JournalSize int
	// JournalBodyLimit is the bytes of each body the journal keeps; 0:
	// DefaultJournalBodyLimit.
	JournalBodyLimit int
	// RateLimit is the rate limit in force at start-up; its zero value is
	// none.
	RateLimit RateLimit
	// Metrics, if not nil, counts every request, and is served at GET
	// /metrics behind the admin key; nil: no metrics, /metrics is 404.
	Metrics *metrics.Metrics
	// Reloadable makes the mock keep what Reload checks a new contract
	// against: the default session's records as they are at start-up.
	Reloadable bool
	// MCP, if not nil, makes the handler served at /__admin/mcp, behind
	// the admin key and the admin guard like the rest of /__admin/ (package
	// cmd/inventory-mock/mcp's Handler); nil: that path is 404.
	MCP func(*Server) http.Handler
}

// DefaultMaxDelay is the longest delay a request may ask for or a chaos
// rule may add, unless Config.MaxDelay says otherwise.
const DefaultMaxDelay = 30 * time.Second

// A Server is the mock as an http.Handler, in two lifetimes.
//
// A Server value is one contract's view of the mock: the contract, what a
// record is, and the routes and handlers built from them. Reload makes a
// new view and puts it in force atomically (live); a request is served
// whole by the view in force when it arrived. What lives as long as the
// process (the store, the journal, the chaos rules, the rate limit, the
// keys, the metrics) is its process, which every view shares.
type Server struct {
	*process

	contract *spec.Contract
	admin    lazyAdmin // the admin API, built from spec.Admin when first used
	shape    *fixtures.Shape
	reshape  *reshaper       // how records are served under this contract; nil: as stored
	fields   map[string]bool // every field of a record schema in force since start-up
	writable map[string]bool // the fields the update sets: its body's that the record has
	judge    *spec.Judge     // the contract's judge of the journal's answers
	handler  http.Handler
	warnings []string
	notes    []string
	loaded   time.Time // when this view was built
	digest   string    // the SHA-256 of the contract's document, in hex
}

// A process is what a Server keeps from start to exit, whatever view is
// in force: made by New, never replaced by a Reload.
type process struct {
	live     *atomic.Pointer[Server] // the view in force
	reloads  *sync.Mutex             // serializes Reload
	base     *fixtures.Shape         // the shape the store's records were made with, at start-up
	seed     *store.List             // with Config.Reloadable: the default session's records at start-up
	store    store.Store
	chaos    *chaos
	journal  *journal
	limiter  *limiter
	metrics  *metrics.Metrics // nil: none
	maxDelay time.Duration
	// requireSession refuses requests that name no session.
	requireSession bool
	rd             *exchange.Redactor // every configured key, each with the variable a curl line reads it from
	keys           httpapi.Keys
	guard          httpapi.Step // the admin guard: Host and cross-origin checks on /__admin/
	cors           corsPolicy
	logger         *slog.Logger
	storeLog       *storeErrorLog // shared by the copies updateRecord makes
	mcp            http.Handler   // served at /__admin/mcp; nil: none
}

// New builds a mock from cfg. It fails if the contract's operations do not
// have the shapes the mock's handlers assume, or its Error schemas do not
// accept the mock's Error body.
func New(cfg Config) (*Server, error) {
	if cfg.Contract == nil {
		c, err := spec.Shared()
		if err != nil {
			return nil, err
		}
		cfg.Contract = c
	}
	logger := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	shape := cfg.Shape
	if shape == nil {
		var err error
		if shape, err = fixtures.NewShape(cfg.Contract); err != nil {
			return nil, err
		}
	}
	if err := httpapi.CheckEnvelope(cfg.Contract); err != nil {
		return nil, fmt.Errorf("mockserver: %w", err)
	}
	st := cfg.Store
	if st == nil {
		if cfg.Records == nil {
			var err error
			if cfg.Records, _, err = fixtures.Default(shape); err != nil {
				return nil, err
			}
		}
		st = store.NewMemory(cfg.Records, cfg.Sessions)
	}
	if cfg.Metrics != nil {
		st = &counted{Store: st, m: cfg.Metrics}
	}
	keys := httpapi.NewKeys(cfg.APIKeys, cfg.AdminKey)
	// Zero or less: the default.
	maxDelay := cmp.Or(max(cfg.MaxDelay, 0), DefaultMaxDelay)
	bodyLimit := cmp.Or(max(cfg.JournalBodyLimit, 0), DefaultJournalBodyLimit)
	maxSessions := cmp.Or(max(cfg.Sessions.MaxSessions, 0), store.DefaultMaxSessions)
	s := &Server{contract: cfg.Contract, shape: shape, fields: map[string]bool{}}
	s.process = &process{
		live: new(atomic.Pointer[Server]), reloads: new(sync.Mutex), base: shape,
		store:    st,
		chaos:    newChaos(cfg.Contract, maxDelay),
		journal:  newJournal(cfg.JournalSize, bodyLimit, maxSessions),
		limiter:  newLimiter(MaxRateBuckets, time.Now),
		metrics:  cfg.Metrics,
		maxDelay: maxDelay,
		rd:       keys.Redactor,
		keys:     keys, logger: logger,
		storeLog:       &storeErrorLog{every: rate.Sometimes{Interval: storeLogEvery}},
		requireSession: cfg.RequireSession,
	}
	for _, name := range shape.Fields {
		s.fields[name] = true
	}
	s.chaos.maxSessions, s.limiter.maxSessions = maxSessions, maxSessions
	if err := s.chaos.set("", cfg.Chaos); err != nil {
		return nil, fmt.Errorf("mockserver: chaos: %w", err)
	}
	if err := s.limiter.set("", cfg.RateLimit); err != nil {
		return nil, fmt.Errorf("mockserver: rate limit: %w", err)
	}
	hosts, err := httpapi.NewHosts(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("mockserver: allowed hosts: %w", err)
	}
	adminOrigins := make([]string, len(cfg.AdminOrigins))
	for i, o := range cfg.AdminOrigins {
		if adminOrigins[i], err = NormalizeOrigin(o); err == nil && adminOrigins[i] == "*" {
			err = errors.New(`"*": the admin API is never open to every origin; name the origin of the page that calls it`)
		}
		if err != nil {
			return nil, fmt.Errorf("mockserver: admin origins: %w", err)
		}
	}
	refusals := httpapi.NewOriginRefusals(logger, s.rd)
	if s.guard, err = httpapi.AdminGuard([]string{spec.AdminBasePath(), metrics.Path}, hosts, adminOrigins, s.rd, func(origin string) {
		refusals.Refused(origin, "the admin API", "--admin-origin")
	}); err != nil {
		return nil, fmt.Errorf("mockserver: admin origins: %w", err)
	}
	s.cors = corsPolicy{origins: cfg.CORSOrigins, adminOrigins: adminOrigins, adminBase: spec.AdminBasePath(), refusals: refusals}
	s.live.Store(s) // what cfg.MCP's handler reads, before any request comes
	if cfg.MCP != nil {
		s.mcp = cfg.MCP(s)
	}
	if err := s.build(); err != nil {
		return nil, err
	}
	if cfg.Reloadable {
		l, err := st.List(context.Background(), store.DefaultSession)
		if err != nil {
			return nil, err
		}
		s.seed = &l
	}
	s.live.Store(s)
	go s.admin() // ready before anyone opens the dashboard, without delaying start-up
	return s, nil
}

// build makes the view's judge, routes and handler from its contract and
// shape.
func (s *Server) build() error {
	s.judge = spec.NewJudge(s.contract, nil)
	s.warnings, s.notes = nil, nil
	s.loaded = time.Now()
	sum := sha256.Sum256(s.contract.Raw)
	s.digest = hex.EncodeToString(sum[:])
	s.writable = writableFields(s.shape)
	root, err := s.routes(s.keys)
	if err != nil {
		return err
	}
	s.warnings = append(s.warnings, exampleWarnings(s.contract)...)
	if s.limiter.on.Load() {
		s.warnings = append(s.warnings, rateLimitWarnings(s.contract)...)
	}
	front := httpapi.Front{
		Logger:   s.logger,
		Redactor: s.rd,
		Steps:    []httpapi.Step{s.guard, cors(s.cors), cleanPath},
		After:    []httpapi.After{s.journal.record},
	}
	if s.metrics != nil {
		front.After = append(front.After, s.metrics.Observe)
	}
	s.handler = front.Serve(root)
	return nil
}

// ServeHTTP serves one request, with the view in force when it arrives.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.live.Load().handler.ServeHTTP(w, r)
}

// Admin returns the admin API under /__admin/ as a caller in the same
// process reaches it (the mock's MCP server): the admin document's checks
// and handlers of the view in force, without the admin key check and the
// admin guard, which keep network callers out. Never serve it on a port:
// whoever holds the Server holds its store already (Store); a network
// caller does not.
func (s *Server) Admin() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.live.Load().admin.ServeHTTP(w, r)
	})
}

// Redactor returns the redactor that hides every configured key wherever
// the mock shows a request: its journal, its logs, its errors.
func (s *Server) Redactor() *exchange.Redactor { return s.rd }

// Contract returns the contract in force.
func (s *Server) Contract() *spec.Contract { return s.live.Load().contract }

// Chaos returns the global latency and fault rules in force.
func (s *Server) Chaos() Chaos { c, _ := s.chaos.get(""); return c }

// Store returns the mock's store.
func (s *Server) Store() store.Store { return s.store }

// Warnings says what of the contract in force the mock does not serve as
// the contract describes it, for the log.
func (s *Server) Warnings() []string { return s.live.Load().warnings }

// RateLimit returns the global rate limit in force.
func (s *Server) RateLimit() RateLimit { rl, _ := s.limiter.get(""); return rl }

// Notes says what of the contract the mock serves in a way the contract
// allows but a user may not expect (an operation answered 501, which the
// contract documents for it), for the start-up log at a lower level than
// Warnings.
func (s *Server) Notes() []string { return s.live.Load().notes }

// routes is the one route table: the mock's own endpoints, then every
// operation of the contract under its base path, behind the key check.
func (s *Server) routes(keys httpapi.Keys) (http.Handler, error) {
	root := http.NewServeMux()
	root.Handle("/healthz", httpapi.Methods(map[string]http.Handler{"GET": http.HandlerFunc(s.health)}))
	if s.metrics != nil {
		root.Handle(metrics.Path, httpapi.Methods(map[string]http.Handler{"GET": httpapi.RequireAdminKey(keys.Admin, keys.API, s.metrics.Handler())}))
	}
	root.Handle("/openapi.yaml", httpapi.Methods(map[string]http.Handler{"GET": httpapi.NewDocument(s.contract.Raw, s.contract.BasePath)}))
	adminBase := spec.AdminBasePath()
	root.Handle(adminBase+"/openapi.yaml", httpapi.Methods(map[string]http.Handler{"GET": httpapi.NewDocument(spec.AdminDocument, adminBase)}))
	s.admin = sync.OnceValues(s.adminRoutes)
	root.Handle(adminBase+"/", httpapi.RequireAdminKey(keys.Admin, keys.API, s.admin))
	if s.mcp != nil {
		root.Handle(adminBase+"/mcp", httpapi.RequireAdminKey(keys.Admin, keys.API, s.mcp))
	}
	// The dashboard's page and assets hold no data: served without a key.
	title, _ := s.info()
	dash, err := dashboard.New(dashboard.Config{Base: adminBase, Title: title, NotFound: http.HandlerFunc(httpapi.NotFound)})
	if err != nil {
		return nil, err
	}
	root.Handle(adminBase+"/{$}", httpapi.Methods(map[string]http.Handler{"GET": dash}))
	root.Handle(adminBase+"/assets/", httpapi.Methods(map[string]http.Handler{"GET": dash}))

	byPath := map[string]map[string]http.Handler{}
	ops := map[string]map[string]*spec.Operation{}
	var order []string
	for _, op := range s.contract.Operations {
		h, err := s.bind(op)
		if err != nil {
			return nil, err
		}
		if h == nil {
			if op.Documents(http.StatusNotImplemented) {
				s.notes = append(s.notes, fmt.Sprintf("%s %s: no handler: %s; after the key check and validation, it answers 501, which the contract documents for it (default response)", op.Method, op.Path, unimplementedReason(op)))
			} else {
				s.warnings = append(s.warnings, fmt.Sprintf("%s %s: no handler: %s; after the key check and validation, it answers 501, a status the contract does NOT document for it", op.Method, op.Path, unimplementedReason(op)))
			}
		}
		p := s.contract.BasePath + op.Path
		if byPath[p] == nil {
			byPath[p] = map[string]http.Handler{}
			ops[p] = map[string]*spec.Operation{}
			order = append(order, p)
		}
		byPath[p][op.Method] = s.operation(op, h)
		ops[p][op.Method] = op
	}
	// Each path of the contract: journaled, the operation noted, the key
	// checked, the session read, the rate limit taken, then the method's
	// operation (405 for another method).
	for _, p := range order {
		h := httpapi.Steps(httpapi.Methods(byPath[p]), s.journal.collect(), addressing(ops[p]), httpapi.RequireKey(keys.API), s.sessions(s.requireSession), s.limiter.limited)
		if err := httpapi.Handle(root, p, h); err != nil {
			return nil, err
		}
	}
	// Anything else under the base path is 404, after the key check.
	other := httpapi.Steps(http.HandlerFunc(httpapi.NotFound), s.journal.collect(), httpapi.RequireKey(keys.API), s.limiter.limited)
	if base := s.contract.BasePath; base != "" {
		root.Handle(base+"/", other)
		root.Handle(base, other)
		root.Handle("/", http.HandlerFunc(httpapi.NotFound))
	} else {
		root.Handle("/", other)
	}
	return root, nil
}

// addressing notes, for the journal, the operation a request's method
// addresses on this path (GET's for HEAD); none for another method.
func addressing(ops map[string]*spec.Operation) httpapi.Step {
	return func(w http.ResponseWriter, r *http.Request) *http.Request {
		m := r.Method
		if m == http.MethodHead && ops[m] == nil {
			m = http.MethodGet
		}
		httpapi.EntryOf(r).Op = ops[m]
		return r
	}
}

// cleanPath answers 404 for a path with empty, "." or ".." segments, where
// ServeMux would otherwise answer a redirect without an Error body.
func cleanPath(w http.ResponseWriter, r *http.Request) *http.Request {
	if !isCleanPath(r.URL.Path) {
		httpapi.NotFound(w, r)
		return nil
	}
	return r
}

// isCleanPath reports whether p is an absolute path without empty, "."
// or ".." segments (a trailing slash aside), as path.Clean would leave it,
// in one pass and without allocating: it is on every request.
func isCleanPath(p string) bool {
	switch {
	case p == "" || p[0] != '/':
		return false
	case p == "//": // the root with a trailing slash, to path.Clean
		return true
	}
	start := 1 // where the current segment starts
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch seg := p[start:i]; {
		case seg == "." || seg == "..":
			return false
		case seg == "" && i < len(p): // an empty segment: //
			return false
		}
		start = i + 1
	}
	return true
}

// Close releases the store.
func (s *Server) Close() error { return s.store.Close() }
