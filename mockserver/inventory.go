package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// bind returns the mock's handler for op, after checking that op has the
// shape the handler assumes; nil where the mock has none. Which operation
// is the list, the update or a read of one record is the contract's
// inventory's to say (spec.Inventory), by structure.
func (s *Server) bind(op *spec.Operation) (opHandler, error) {
	switch {
	case op == s.shape.List:
		return s.listInventory, nil
	case op == s.shape.Update:
		if r := op.Response(http.StatusOK); r == nil || r.Schema == nil || r.Schema.Name != s.shape.Schema.Name {
			return nil, fmt.Errorf("mockserver: %s: the mock serves it as the update of one %s, so its 200 answer must be %s", op.Name(), s.shape.Schema.Name, s.shape.Schema.Name)
		}
		return s.updateInventory(op)
	case slices.Contains(s.shape.Reads, op):
		return s.getInventoryItem, nil
	}
	return nil, nil
}

// listInventory answers the list: every record of the session, ascending
// by key.
func (s *Server) listInventory(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
	l, err := s.store.List(r.Context(), in.Session)
	if err != nil {
		s.writeStoreError(w, r, err)
		return
	}
	if s.reshape != nil {
		// Served as the contract in force shapes the records: made for
		// this answer, so not kept whole by the journal nor compressed.
		httpapi.WriteJSON(w, http.StatusOK, s.reshape.list(l))
		return
	}
	h := w.Header()
	h["Content-Type"] = httpapi.ApplicationJSON
	h["Cache-Control"] = httpapi.NoStore
	keepList(w, r, l)
	if l.Size() >= gzipMinSize {
		h["Vary"] = varyAcceptEncoding
		if acceptsGzip(r) {
			h["Content-Encoding"] = gzipEncoding
			h["Content-Length"] = []string{strconv.Itoa(l.GzipSize())}
			w.WriteHeader(http.StatusOK)
			l.WriteGzipTo(w)
			return
		}
	}
	h["Content-Length"] = []string{strconv.Itoa(l.Size())}
	w.WriteHeader(http.StatusOK)
	l.WriteTo(w)
}

// gzipMinSize is the smallest list sent gzip-compressed to clients that
// accept it: about 700 pets. Below it, compression saves less than it
// costs.
const gzipMinSize = 32 << 10

var (
	gzipEncoding       = []string{"gzip"}
	varyAcceptEncoding = []string{"Accept-Encoding"}
)

// acceptsGzip reports whether the request's Accept-Encoding allows gzip
// (RFC 9110, section 12.5.3): gzip (or x-gzip) with a q-value above 0, or
// no mention of it and * above 0.
func acceptsGzip(r *http.Request) bool {
	gzipQ, anyQ := -1.0, -1.0
	for _, v := range r.Header.Values("Accept-Encoding") {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			switch name {
			case "gzip", "x-gzip":
				gzipQ = q
			case "*":
				anyQ = q
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// getInventoryItem answers a read of one record.
func (s *Server) getInventoryItem(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
	id, ok := s.key(w, r)
	if !ok {
		return
	}
	rec, err := s.store.Get(r.Context(), in.Session, id)
	if err != nil {
		s.writeRecordError(w, r, id, err)
		return
	}
	writeRecord(w, s.reshape.stored(rec))
}

// updateInventory returns the handler of the update. It applies the fields
// of the body that the update's body schema declares and the record schema
// has, atomically, and answers the whole record. Which fields those are is
// read from the contract once, here.
func (s *Server) updateInventory(op *spec.Operation) (opHandler, error) {
	fields := s.writable
	if len(fields) == 0 {
		return nil, fmt.Errorf("mockserver: %s: the mock serves it as the update of one %s, so its body must declare fields of %s", op.Name(), s.shape.Schema.Name, s.shape.Schema.Name)
	}
	return func(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
		id, ok := s.key(w, r)
		if !ok {
			return
		}
		// The body was decoded for this request alone: what is not a
		// field of the record is dropped from it, not copied around.
		changes, _ := in.Body.(map[string]any)
		maps.DeleteFunc(changes, func(name string, _ any) bool { return !fields[name] })
		change := func(old fixtures.Record) (fixtures.Record, error) {
			// The write is judged by the contract in force when it
			// applies, under the record's lock: a reload while the
			// request waited for it must not let a value through that
			// the new contract forbids.
			v, ch := s.live.Load(), changes
			if len(v.writable) == 0 {
				v = s
			}
			if v != s {
				ch = maps.Clone(changes)
				maps.DeleteFunc(ch, func(name string, _ any) bool { return !v.writable[name] })
			}
			// Under a contract other than the record's, the write applies
			// to the record as that contract serves it, and keeps the
			// fields it does not serve (reshaper.write).
			rec, ps := v.shape.ApplyChecked(v.reshape.stored(old), ch, v.shape.Update.Body.Schema)
			if len(ps) > 0 {
				return fixtures.Record{}, problems(ps)
			}
			return v.reshape.write(old, rec), nil
		}
		var rec fixtures.Record
		var err error
		if in.DryRun {
			// Prefer: code=200: the record as the update would leave
			// it, read and changed here, never stored.
			if rec, err = s.store.Get(r.Context(), in.Session, id); err == nil {
				rec, err = change(rec)
			}
		} else {
			rec, err = s.store.Update(r.Context(), in.Session, id, change)
		}
		if err != nil {
			s.writeRecordError(w, r, id, err)
			return
		}
		writeRecord(w, s.reshape.stored(rec))
	}, nil
}

// writableFields returns the fields the update sets: those its body
// schema declares that the record schema has; nil without an update.
func writableFields(shape *fixtures.Shape) map[string]bool {
	op := shape.Update
	if op == nil || op.Body == nil || op.Body.Schema == nil {
		return nil
	}
	fields := map[string]bool{}
	for _, name := range op.Body.Schema.PropertyNames() {
		if shape.Has(name) {
			fields[name] = true
		}
	}
	return fields
}

// problems is a write the record's rules refuse.
type problems []spec.Problem

func (ps problems) Error() string { return spec.Join(ps) }

// key reads the record's key from the path. The contract's validation has
// let only integers through, so a failure here is an int64 overflow the
// document allowed.
func (s *Server) key(w http.ResponseWriter, r *http.Request) (int64, bool) {
	raw := r.PathValue(s.shape.Key)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidParameter, fmt.Sprintf("%s: %q is not an int64 integer", s.shape.Key, raw))
		return 0, false
	}
	return id, true
}

// writeRecordError answers a read or write of one record that failed.
func (s *Server) writeRecordError(w http.ResponseWriter, r *http.Request, id int64, err error) {
	var ps problems
	switch {
	case errors.As(err, &ps):
		_, msg := httpapi.Describe(ps)
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidBody, msg)
	case errors.Is(err, store.ErrNotFound):
		httpapi.WriteError(w, r, http.StatusNotFound, httpapi.CodeNotFound, fmt.Sprintf("no record with %s %d", s.shape.Key, id))
	default:
		s.writeStoreError(w, r, err)
	}
}

// writeStoreError answers a store that could not serve: 503, saying
// whether the store could not read or write, but not why: the reason names
// the server's own files and hosts (a full disk's path), which are for the
// person running the mock, so the log gets it, with the request's id.
func (s *Server) writeStoreError(w http.ResponseWriter, r *http.Request, err error) {
	what := "write"
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		what = "read"
	}
	id := httpapi.EntryOf(r).ID
	s.storeLog.log(s.logger, s.rd, err, id)
	httpapi.WriteError(w, r, http.StatusServiceUnavailable, httpapi.CodeUnavailable,
		"the mock's store cannot "+what+" now; the mock's log says why (request "+id+")")
}

// A storeErrorLog logs the errors of a store that cannot serve: the first
// at once, then at most one every storeLogEvery, with how many were left
// out, so that a store down under load does not flood the log.
type storeErrorLog struct {
	every   rate.Sometimes // Interval: storeLogEvery
	skipped atomic.Int64
}

// storeLogEvery is the least time between two lines of a storeErrorLog.
const storeLogEvery = 10 * time.Second

func (l *storeErrorLog) log(logger *slog.Logger, rd *exchange.Redactor, err error, requestID string) {
	logged := false
	l.every.Do(func() {
		logged = true
		logger.Warn("the store cannot serve; answered 503", "error", rd.String(err.Error()), "request_id", requestID, "errors_not_logged_since_the_last", l.skipped.Swap(0))
	})
	if !logged {
		l.skipped.Add(1)
	}
}

// writeRecord sends one record, followed by a newline, without copying it.
func writeRecord(w http.ResponseWriter, rec fixtures.Record) {
	h := w.Header()
	h["Content-Type"] = httpapi.ApplicationJSON
	h["Cache-Control"] = httpapi.NoStore
	h["Content-Length"] = []string{strconv.Itoa(len(rec.JSON) + 1)}
	w.WriteHeader(http.StatusOK)
	w.Write(rec.JSON)
	w.Write(newline)
}

var newline = []byte{'\n'}
