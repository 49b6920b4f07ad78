package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/petstore/inventory-kit/spec"
)

// Header values every response of an operation carries, made once: a
// handler that changes one sets a new slice (Header.Set), so they are
// never written to.
var (
	noStore         = []string{"no-store"}
	deprecationTrue = []string{"true"}
)

// An opHandler serves one operation of the contract once the request has
// passed the key check and the contract's validation. body is the request
// body, already read and bounded; nil for operations without one.
type opHandler func(w http.ResponseWriter, r *http.Request, body []byte)

// operation wraps the handler of one contract operation: it marks
// deprecated operations, reads the body within MaxBodyBytes, and validates
// the request against the contract before h sees it. An operation with no
// handler answers 501 to every request that passed the key check, without
// validating it: the contract gives no response shape to mock, so no other
// answer would be the real service's.
func (s *Server) operation(op *spec.Operation, h opHandler) http.Handler {
	validate := true
	if h == nil {
		h, validate = notImplemented, false
	}
	hasBody := op.Operation.RequestBody != nil
	bodyRequired := hasBody && op.Operation.RequestBody.Required != nil && *op.Operation.RequestBody.Required
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr["Cache-Control"] = noStore
		if op.Deprecated {
			// The contract marks the operation deprecated but gives no date.
			hdr["Deprecation"] = deprecationTrue
		}
		if !validate {
			h(w, r, nil)
			return
		}
		var body []byte
		if hasBody {
			var err error
			if body, err = readBody(w, r); err != nil {
				writeError(w, http.StatusBadRequest, CodePayloadTooLarge,
					fmt.Sprintf("body: larger than the %d bytes (1 MiB) the mock accepts", MaxBodyBytes))
				return
			}
			if len(body) == 0 && bodyRequired {
				writeError(w, http.StatusBadRequest, CodeInvalidBody, `body: required; send a JSON object such as {"quantity": 5}`)
				return
			}
		}
		if ps := s.contract.ValidateRequest(r, op); len(ps) > 0 {
			code, msg := describe(op, r, body, ps)
			writeError(w, http.StatusBadRequest, code, msg)
			return
		}
		h(w, r, body)
	})
}

// readBody reads the request body, at most MaxBodyBytes, and puts it back
// for the validator. A body that announces or turns out to be larger is an
// error, found without reading past the limit.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > MaxBodyBytes {
		return nil, errors.New("too large")
	}
	// io.ReadAll, but starting from the announced length (plus one byte, to
	// see the end without growing), not from 512 bytes.
	body, err := readAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes), max(r.ContentLength, 0)+1)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, nil
}

// readAll is io.ReadAll with a first buffer of size bytes.
func readAll(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}

// describe turns the contract's problems with a request into an Error code
// and a message that says what was wrong and what the contract wants.
func describe(op *spec.Operation, r *http.Request, body []byte, ps []spec.Problem) (code, message string) {
	var params, media, other []spec.Problem
	for _, p := range ps {
		switch p.Kind {
		case spec.KindParameter:
			params = append(params, p)
		case spec.KindContentType:
			media = append(media, p)
		default:
			other = append(other, p)
		}
	}
	switch {
	case len(params) > 0:
		return CodeInvalidParameter, spec.Join(params)
	case len(media) > 0:
		var accepted []string
		if rb := op.Operation.RequestBody; rb != nil && rb.Content != nil {
			for ct := range rb.Content.KeysFromOldest() {
				accepted = append(accepted, ct)
			}
		}
		return CodeUnsupportedMediaType, fmt.Sprintf("Content-Type %q is not accepted; send %s",
			r.Header.Get("Content-Type"), strings.Join(accepted, " or "))
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return CodeInvalidBody, "body: " + jsonError(body, err)
	}
	for i := range other {
		if other[i].Field == "" {
			other[i].Field = "body"
		}
	}
	return CodeInvalidBody, spec.Join(other)
}

// jsonError says where a JSON syntax error is.
func jsonError(body []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Value + " is out of range"
	}
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON: %v (at byte %d)", se, se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end") {
		return fmt.Sprintf("malformed JSON: unexpected end of input after %d bytes", len(body))
	}
	return "malformed JSON: " + err.Error()
}

func notImplemented(w http.ResponseWriter, r *http.Request, _ []byte) {
	writeError(w, http.StatusNotImplemented, CodeNotImplemented,
		fmt.Sprintf("%s %s is in the contract, but the contract gives no response shape for it, so the mock cannot answer it", r.Method, r.URL.Path))
}
