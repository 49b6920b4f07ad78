package mockserver

import (
	"net/http"
	"strconv"
)

// health answers GET /healthz for liveness probes.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, []byte(`{"status":"ok","items":`+strconv.Itoa(s.store.Len())+"}\n"))
}

// serveSpec answers GET /openapi.yaml with the document the mock serves.
func (s *Server) serveSpec(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(s.contract.Raw)
}

// reset answers POST /__admin/reset: the store goes back to its fixtures.
func (s *Server) reset(w http.ResponseWriter, r *http.Request) {
	s.store.Reset()
	w.WriteHeader(http.StatusNoContent)
}
