package mockserver

import (
	"net/http"
	"strconv"
)

// health answers GET /healthz for liveness probes: 200 while the store
// serves, 503 with the reason while it cannot.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	n, err := s.count(r.Context())
	if err == nil {
		err = s.store.Health(r.Context())
	}
	if err != nil {
		writeStoreError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok","items":`+strconv.Itoa(n)+"}\n"))
}

// serveSpec answers GET /openapi.yaml with the document the mock serves.
func (s *Server) serveSpec(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.contract.Raw)
}

// reset answers POST /__admin/reset: the session named by the request (the
// default one if none) goes back to its fixtures.
func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	session, ok := sessionOf(w, r)
	if !ok {
		return
	}
	if err := s.store.Reset(r.Context(), session); err != nil {
		writeStoreError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
