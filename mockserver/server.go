// Package mockserver is the stateful mock of the Pet Store Inventory
// Service: an http.Handler that serves the contract's operations from an
// in-memory Store, checks the bearer key, validates every request against
// the contract, and answers every error with the contract's Error body.
//
// A request travels, in order: recoverPanics, accessLog, cors (which answers
// preflights), cleanPath, the route table in routes, requireKey, the
// operation wrapper (body limit and contract validation, in operation.go)
// and finally the operation's handler (inventory.go), which reads and
// writes the Store.
package mockserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/spec"
)

// MaxBodyBytes is the largest request body the mock reads: 1 MiB.
const MaxBodyBytes = 1 << 20

// Config is what New needs to build a mock.
type Config struct {
	Contract    *spec.Contract  // required
	Items       []fixtures.Item // the data served; POST /__admin/reset restores it
	APIKeys     []string        // empty: only DevKey
	AdminKey    string          // empty: reset takes an API key
	CORSOrigins []string        // empty or "*": any origin, without credentials
	Logger      *slog.Logger    // nil: no logs
}

// A Server is the mock as an http.Handler.
type Server struct {
	contract *spec.Contract
	store    *Store
	handler  http.Handler
}

// New builds a mock from cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Contract == nil {
		return nil, errors.New("mockserver: Config.Contract is nil")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	keys := newKeyring(cfg.APIKeys)
	if len(keys) == 0 {
		keys = newKeyring([]string{DevKey})
	}
	adminKeys := keys
	if cfg.AdminKey != "" {
		adminKeys = newKeyring([]string{cfg.AdminKey})
	}
	s := &Server{contract: cfg.Contract, store: NewStore(cfg.Items)}
	root, err := s.routes(keys, adminKeys)
	if err != nil {
		return nil, err
	}
	s.handler = recoverPanics(logger, accessLog(logger, cors(cfg.CORSOrigins, cleanPath(root))))
	return s, nil
}

// ServeHTTP serves one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Store returns the mock's store.
func (s *Server) Store() *Store { return s.store }

// handlers maps the contract's operationIds to the mock's handlers. An
// operation of the contract that is not here answers 501 (operation.go).
func (s *Server) handlers() map[string]opHandler {
	return map[string]opHandler{
		"listInventory":   s.listInventory,
		"updateInventory": s.updateInventory,
	}
}

// routes is the one route table: the mock's own endpoints, then every
// operation of the contract under its base path, behind the key check.
func (s *Server) routes(keys, adminKeys keyring) (http.Handler, error) {
	root := http.NewServeMux()
	root.Handle("/healthz", methods(map[string]http.Handler{"GET": http.HandlerFunc(s.health)}))
	root.Handle("/openapi.yaml", methods(map[string]http.Handler{"GET": http.HandlerFunc(s.serveSpec)}))
	root.Handle("/__admin/reset", requireKey(adminKeys, methods(map[string]http.Handler{"POST": http.HandlerFunc(s.reset)})))

	api := http.NewServeMux()
	byPath := map[string]map[string]http.Handler{}
	var order []string
	impl := s.handlers()
	for _, op := range s.contract.Operations {
		p := s.contract.BasePath + op.Path
		if byPath[p] == nil {
			byPath[p] = map[string]http.Handler{}
			order = append(order, p)
		}
		byPath[p][op.Method] = s.operation(op, impl[op.ID])
	}
	for _, p := range order {
		if err := handle(api, p, methods(byPath[p])); err != nil {
			return nil, err
		}
	}
	api.Handle("/", http.HandlerFunc(notFound))

	if base := s.contract.BasePath; base != "" {
		root.Handle(base+"/", requireKey(keys, api))
		root.Handle("/", http.HandlerFunc(notFound))
	} else {
		root.Handle("/", requireKey(keys, api))
	}
	return root, nil
}

// handle registers pattern, turning ServeMux's panic on a path it cannot
// express (such as /files/{name}.json in another document) into an error.
func handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("mockserver: cannot serve path %s: %v", pattern, v)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// methods dispatches on the request method and answers 405 with an Allow
// header for the others.
func methods(byMethod map[string]http.Handler) http.Handler {
	allowed := make([]string, 0, len(byMethod))
	for m := range byMethod {
		allowed = append(allowed, m)
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := byMethod[r.Method]; ok {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			fmt.Sprintf("%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow))
	})
}

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no such path: %s", r.URL.Path))
}

// cleanPath answers 404 for a path with empty, "." or ".." segments, where
// ServeMux would otherwise answer a redirect without an Error body.
func cleanPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "" || p[0] != '/' || (p != "/" && path.Clean(p) != strings.TrimSuffix(p, "/")) {
			notFound(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
