package httpapi

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore/inventory-kit/spec"
)

// A Step is one item of a request's path. It answers the request itself
// and returns nil, or returns the request the next item sees: r, or a
// copy of it with what the step changed. Steps run one after the other,
// not one inside the other: a step that has to see the answer too does so
// through the Entry (its Observer) and the Front's After.
type Step func(w http.ResponseWriter, r *http.Request) *http.Request

// Steps returns h behind steps, listed in the order a request meets them;
// nil items are skipped.
func Steps(h http.Handler, steps ...Step) http.Handler {
	steps = slices.DeleteFunc(steps, func(s Step) bool { return s == nil })
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, step := range steps {
			if r = step(w, r); r == nil {
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// A Request is what an operation's handler gets once the request has
// passed the checks before it.
type Request struct {
	Op      *spec.Operation
	Body    any    // the decoded body, as spec.DecodeJSON returns it; nil if none
	Raw     []byte // the body as sent
	Session string // the session the request reads and writes (the mock's)
	// DryRun, set by Prefer: code=200 on a write, asks the handler to
	// answer what the write would store, and store nothing.
	DryRun bool
}

// A Handler serves one operation of a document.
type Handler func(w http.ResponseWriter, r *http.Request, in *Request)

// Methods dispatches on the request method and answers 405 with an Allow
// header for the others. HEAD is served wherever GET is, as RFC 9110
// section 9.3.2 asks of a general-purpose server (net/http sends no body).
func Methods(byMethod map[string]http.Handler) http.Handler {
	allowed := slices.Collect(maps.Keys(byMethod))
	if get, ok := byMethod["GET"]; ok && byMethod["HEAD"] == nil {
		byMethod["HEAD"] = get
		allowed = append(allowed, "HEAD")
	}
	slices.Sort(allowed)
	allow := strings.Join(allowed, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := byMethod[r.Method]; ok {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Allow", allow)
		WriteError(w, r, http.StatusMethodNotAllowed, CodeMethodNotAllowed,
			fmt.Sprintf("%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow))
	})
}

// NotFound answers 404 with an Error body naming the path.
func NotFound(w http.ResponseWriter, r *http.Request) {
	WriteError(w, r, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no such path: %s", r.URL.Path))
}

// Handle registers pattern, turning ServeMux's panic on a path it cannot
// express (such as /files/{name}.json in another document), or one that
// collides with another, into an error.
func Handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("cannot serve path %s: %v", pattern, v)
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// MaxBodyBytes is the largest request body a server of the kit reads: 1 MiB.
const MaxBodyBytes = 1 << 20

// errTooLarge is a body that announces more than MaxBodyBytes.
var errTooLarge = errors.New("too large")

// ReadBody reads the request body, at most MaxBodyBytes.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errTooLarge
	}
	return ReadUpTo(http.MaxBytesReader(w, r.Body, MaxBodyBytes), MaxBodyBytes, r.ContentLength)
}

// WriteBodyError answers a body that could not be read: too large, or
// ended before its announced length or the read timeout.
func WriteBodyError(w http.ResponseWriter, r *http.Request, err error) {
	var tooLarge *http.MaxBytesError
	if err == errTooLarge || errors.As(err, &tooLarge) {
		WriteError(w, r, http.StatusBadRequest, CodePayloadTooLarge,
			fmt.Sprintf("body: larger than the %d bytes (1 MiB) the mock accepts", MaxBodyBytes))
		return
	}
	WriteError(w, r, http.StatusBadRequest, CodeInvalidBody, "body: ended early, before all of it was sent ("+err.Error()+")")
}

// ReadUpTo reads r until EOF or until it has more than limit bytes, with
// a first buffer of size bytes (plus one, to see the end without
// growing), not io.ReadAll's 512. It returns what it read: limit+1 bytes
// at most.
func ReadUpTo(r io.Reader, limit int, size int64) ([]byte, error) {
	b := make([]byte, 0, min(max(size, 0), int64(limit))+1)
	for len(b) <= limit {
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(2*cap(b), limit+1))
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):min(cap(b), limit+1)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// ProxyTag tags the admin document's operations the validating proxy
// serves; the mock serves the others.
const ProxyTag = "proxy"

// AdminMux builds the admin API of one server from the admin document:
// the operations tagged tag (ProxyTag), or, for "", those without that
// tag, each bound to its handler by operationId and its requests checked
// by the document before the handler sees them. Every such operation must
// have a handler and every handler an operation. The other server's
// operations answer 404, saying whose they are; any other path 404 too.
func AdminMux(doc *spec.Contract, tag string, handlers map[string]Handler) (http.Handler, error) {
	mux := http.NewServeMux()
	byPath := map[string]map[string]http.Handler{}
	var order []string
	handlers = maps.Clone(handlers)
	for _, op := range doc.Operations {
		p := doc.BasePath + op.Path
		if byPath[p] == nil {
			byPath[p] = map[string]http.Handler{}
			order = append(order, p)
		}
		if proxyOp := slices.Contains(op.Operation.Tags, ProxyTag); proxyOp != (tag == ProxyTag) {
			by := "the mock (inventory-mock without --proxy-to)"
			if proxyOp {
				by = "the validating proxy (inventory-mock --proxy-to URL)"
			}
			byPath[p][op.Method] = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				WriteError(w, r, http.StatusNotFound, CodeNotFound, fmt.Sprintf("%s %s is %s's: this server does not serve it", op.Method, r.URL.Path, by))
			})
			continue
		}
		h, ok := handlers[op.ID]
		if !ok {
			return nil, fmt.Errorf("admin operation %s has no handler", op.Name())
		}
		delete(handlers, op.ID)
		byPath[p][op.Method] = adminOperation(op, h)
	}
	for id := range handlers {
		return nil, fmt.Errorf("admin handler %s is not in the admin document", id)
	}
	for _, p := range order {
		if err := Handle(mux, p, Methods(byPath[p])); err != nil {
			return nil, err
		}
	}
	mux.HandleFunc("/", NotFound)
	return mux, nil
}

// adminOperation reads and validates an admin request before h sees it.
func adminOperation(op *spec.Operation, h Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if op.Body != nil {
			var err error
			if body, err = ReadBody(w, r); err != nil {
				WriteBodyError(w, r, err)
				return
			}
		}
		in := &Request{Op: op, Raw: body}
		var ps []spec.Problem
		if in.Body, ps = op.CheckRequest(r, r.PathValue, body); len(ps) > 0 {
			WriteProblems(w, r, ps)
			return
		}
		h(w, r, in)
	})
}
