package mockserver

import (
	"log/slog"
	"net/http"

	"github.com/petstore/inventory-kit/spec"
)

// What the module's other server, the validating proxy (package
// mockserver/proxy), takes from the mock, so that its logs, its errors and
// its admin surface are the mock's.

// LogAndRecover wraps next in the mock's outer chain: one access-log line
// per request with a request id, and a panic turned into a 500 Error. The
// keys are replaced wherever a request would put them in the log.
func LogAndRecover(logger *slog.Logger, keys []string, next http.Handler) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rd := newRedactor(keys...)
	return accessLog(logger, rd, recoverer(logger, rd, next))
}

// WriteError sends the contract's Error body, {code, message, status},
// with status equal to the HTTP status, as every error of the mock.
func WriteError(w http.ResponseWriter, status int, code, message string) {
	writeError(w, status, code, message)
}

// WriteInvalid answers 400 to a request that breaks the contract, with the
// code and message the mock gives the same problems.
func WriteInvalid(w http.ResponseWriter, ps []spec.Problem) {
	code, msg := describe(ps)
	writeError(w, http.StatusBadRequest, code, msg)
}

// CheckEnvelope checks that every error response c documents with a JSON
// schema accepts the Error bodies WriteError sends.
func CheckEnvelope(c *spec.Contract) error { return checkEnvelope(c) }

// NewAdmin builds the admin surface of spec/admin.yaml for another server:
// the operations whose operationIds are in handlers, each request checked
// by the admin document before its handler sees it, behind the admin key
// (or, without one, any of apiKeys, or DevKey without those). Every other
// path under /__admin/ answers 404. Mount it at /__admin/.
func NewAdmin(handlers map[string]http.Handler, adminKey string, apiKeys []string) (http.Handler, error) {
	doc, err := spec.Admin()
	if err != nil {
		return nil, err
	}
	hs := make(map[string]adminHandler, len(handlers))
	for id, h := range handlers {
		hs[id] = func(w http.ResponseWriter, r *http.Request, _ *request) { h.ServeHTTP(w, r) }
	}
	mux, err := adminMux(doc, hs, false)
	if err != nil {
		return nil, err
	}
	if len(apiKeys) == 0 {
		apiKeys = []string{DevKey}
	}
	keys := newKeyring(apiKeys)
	adminKeys := keys
	if adminKey != "" {
		adminKeys = newKeyring([]string{adminKey})
	}
	return requireAdminKey(adminKeys, keys, mux), nil
}
