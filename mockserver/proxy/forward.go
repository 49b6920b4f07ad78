package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/conformance/traffic"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// An exchange is one forwarded request while it is served: what the
// checks will get, and how the backend's side went.
type exchange struct {
	x        traffic.Exchange
	start    time.Time
	rv       *traffic.RequestVerdict // checked before forwarding (Enforce); else after
	reqRest  *counter                // the rest of a request body too large to keep, as it streams
	resp     *capture                // the answer's body as it passes; nil: no answer
	answered []traffic.Violation     // the answer's violations, where Enforce checked them already
	checked  bool                    // answered holds the answer's verdict
	failure  *traffic.Violation      // the backend failed: unreachable, timed out, or cut its answer
}

// exchangeKey carries the exchange in the forwarded request's context.
type exchangeKey struct{}

// errEnforced is ModifyResponse's error for an answer Enforce stops.
var errEnforced = errors.New("the answer breaks the contract")

// forward sends r to the backend and its answer back, and checks both.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	// The backend's answer passes with its own headers: not the access
	// log's request id.
	delete(w.Header(), mockserver.RequestIDHeader)
	if traffic.IsPreflight(r) || r.Header.Get("Upgrade") != "" {
		p.rp.ServeHTTP(w, r) // browser mechanics and protocol switches: no contract describes them
		return
	}
	ex := &exchange{start: time.Now()}
	// A request body in a content coding is not decoded: it passes unchecked.
	ex.x = traffic.Exchange{Time: ex.start, Request: r, ReqEncoding: coding(r.Header)}
	if !noBody(r) {
		body, err := readUpTo(r.Body, p.limit, r.ContentLength)
		if err != nil {
			// As the mock answers a body that ends early; nothing reaches the backend.
			mockserver.WriteError(w, http.StatusBadRequest, mockserver.CodeInvalidBody, "body: ended early, before all of it was sent ("+err.Error()+")")
			return
		}
		ex.x.ReqBody, ex.x.ReqSize = body, int64(len(body))
		if len(body) > p.limit {
			ex.x.ReqBody = body[:p.limit]
			ex.reqRest = &counter{r: r.Body}
			ex.reqRest.n.Store(int64(len(body)))
			r.Body = streamBody{io.MultiReader(bytes.NewReader(body), ex.reqRest), r.Body}
		} else {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
	}
	if p.enforce && p.reject(w, ex) {
		return
	}
	// In a defer, so that an answer whose copy panics
	// (http.ErrAbortHandler, the backend cut it short) is recorded too.
	defer p.finish(ex)
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, ex)))
	// The client has the whole answer before the checks run.
	http.NewResponseController(w).Flush()
}

// clientURL is the address the client used.
func clientURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

// reject checks the request before it is forwarded, and answers it
// itself when it breaks the contract: 404 or 405 for no such operation,
// 400 for its parameters, content type or body, as the mock would. A
// missing credential is forwarded: the backend answers 401.
func (p *Proxy) reject(w http.ResponseWriter, ex *exchange) bool {
	rv := p.checker.CheckRequest(&ex.x)
	ex.rv = rv
	if !rv.Invalid() || !p.rejects(rv) {
		return false
	}
	switch {
	case rv.Op == nil && rv.Problems[0].Kind == spec.KindMethod:
		mockserver.WriteError(w, http.StatusMethodNotAllowed, mockserver.CodeMethodNotAllowed, rv.Problems[0].Message)
	case rv.Op == nil:
		mockserver.WriteError(w, http.StatusNotFound, mockserver.CodeNotFound, rv.Problems[0].Message)
	default:
		mockserver.WriteInvalid(w, rv.Problems)
	}
	ex.x.URL = clientURL(ex.x.Request)
	p.findings.Record(&ex.x, rv.Name, rv.Violations)
	return true
}

// rejects reports whether Enforce stops a request with these problems:
// only for rules the filter keeps, and never one without a credential,
// which the backend answers 401 before it looks at anything else.
func (p *Proxy) rejects(rv *traffic.RequestVerdict) bool {
	if rv.NoCredential {
		return false
	}
	for _, v := range rv.Violations {
		if v.Rule != traffic.RuleAuthMissing && v.Rule != traffic.RuleTooLarge {
			return true
		}
	}
	return false
}

// rewrite maps the contract's base path to the backend's, and keeps what
// the client sent: the query as it came, and its own forwarding headers.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	in, out := pr.In, pr.Out
	out.URL.Scheme, out.URL.Host = p.upstream.Scheme, p.upstream.Host
	out.URL.Path = p.upstream.Path + strings.TrimPrefix(in.URL.Path, p.base)
	out.URL.RawPath = ""
	if in.URL.RawPath != "" {
		out.URL.RawPath = p.upstream.EscapedPath() + strings.TrimPrefix(in.URL.RawPath, p.base)
	}
	out.URL.RawQuery = in.URL.RawQuery
	out.Host = ""
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v, ok := in.Header[h]; ok {
			out.Header[h] = v
		}
	}
}

// modifyResponse starts the capture of the answer's body. With Enforce it
// reads the body up to the limit first, checks the answer, and stops one
// that breaks the contract.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	ex, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return nil
	}
	ex.x.Status, ex.x.RespHeader = resp.StatusCode, resp.Header
	c := &capture{body: resp.Body, limit: p.limit, keep: true}
	if n := resp.ContentLength; n > 0 && n <= int64(p.limit) {
		c.buf = make([]byte, 0, n)
	}
	ex.resp = c
	if !p.enforce {
		resp.Body = c
		return nil
	}
	c.keep = false
	head, err := readUpTo(c, p.limit, resp.ContentLength)
	c.buf = head[:min(len(head), p.limit)]
	if err != nil {
		return err // the backend cut its answer: upstreamError says so
	}
	if len(head) > p.limit {
		resp.Body = streamBody{io.MultiReader(bytes.NewReader(head), c), c}
		return nil // too large to check: it passes
	}
	resp.Body = io.NopCloser(bytes.NewReader(head))
	c.body.Close()
	ex.fill()
	decode(&ex.x, p.limit)
	ex.answered, ex.checked = p.checker.CheckResponse(&ex.x, ex.rv), true
	for _, v := range ex.answered {
		if severityOf(v.Rule) == traffic.SeverityError {
			return errEnforced
		}
	}
	return nil
}

func severityOf(rule string) string {
	r, _ := traffic.RuleNamed(rule)
	return r.Severity
}

// fill copies what the capture saw of the answer into the exchange.
func (ex *exchange) fill() {
	if ex.resp != nil {
		ex.x.RespBody, ex.x.RespSize = ex.resp.buf, ex.resp.n
	}
	if ex.reqRest != nil {
		ex.x.ReqSize = ex.reqRest.n.Load()
	}
}

// upstreamError answers when there is no answer to pass: the backend
// could not be reached (502), sent nothing for the timeout (504), cut its
// answer short (502), or, with Enforce, answered what breaks the contract
// (502). A client that went away gets nothing.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		mockserver.WriteError(w, http.StatusBadGateway, "upstream_unreachable", "the backend could not be reached")
		return
	}
	host := p.upstream.Host
	switch {
	case errors.Is(err, errEnforced):
		msgs := make([]string, 0, len(ex.answered))
		for _, v := range ex.answered {
			if severityOf(v.Rule) == traffic.SeverityError {
				msgs = append(msgs, v.Rule+" "+v.Path+": "+v.Message)
			}
		}
		msg := fmt.Sprintf("the backend answered %d, which breaks the contract: %s", ex.x.Status, strings.Join(msgs, "; "))
		mockserver.WriteError(w, http.StatusBadGateway, "contract_violation", p.findings.Redact(&ex.x, msg))
		return
	case isTimeout(err):
		ex.failure = &traffic.Violation{Rule: traffic.RuleUnreachable, Path: "status", Message: fmt.Sprintf("the backend at %s sent nothing for %s", host, p.timeout)}
		mockserver.WriteError(w, http.StatusGatewayTimeout, "upstream_timeout", ex.failure.Message)
	case r.Context().Err() != nil:
		return // the client went away
	case ex.resp != nil:
		ex.failure = &traffic.Violation{Rule: traffic.RuleIncomplete, Path: "$", Message: fmt.Sprintf("the backend's answer (%d) ended early: %v", ex.x.Status, err)}
		mockserver.WriteError(w, http.StatusBadGateway, "upstream_incomplete", p.findings.Redact(&ex.x, ex.failure.Message))
	default:
		ex.failure = &traffic.Violation{Rule: traffic.RuleUnreachable, Path: "status", Message: fmt.Sprintf("the backend at %s could not be reached: %v", host, err)}
		mockserver.WriteError(w, http.StatusBadGateway, "upstream_unreachable", p.findings.Redact(&ex.x, ex.failure.Message))
	}
}

// isTimeout reports whether err is a timeout of the transport's, such as
// its wait for the answer's headers.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}

// finish checks what passed, once the client has the answer, and records
// it.
func (p *Proxy) finish(ex *exchange) {
	ex.fill()
	x := &ex.x
	rv := ex.rv
	if rv == nil {
		rv = p.checker.CheckRequest(x)
	}
	vs := rv.Violations
	c := ex.resp
	switch {
	case ex.failure == nil && c != nil && c.err != nil:
		// Cut short while it streamed to the client.
		rule, msg := traffic.RuleIncomplete, fmt.Sprintf("the backend's answer (%d) ended early: %v", x.Status, c.err)
		if isTimeout(c.err) {
			rule, msg = traffic.RuleUnreachable, fmt.Sprintf("the backend at %s stopped sending its answer (%d) for %s", p.upstream.Host, x.Status, p.timeout)
		}
		ex.failure = &traffic.Violation{Rule: rule, Path: "$", Message: msg}
	}
	switch {
	case ex.failure != nil:
		if p.checker.Keeps(ex.failure.Rule) {
			f := *ex.failure
			f.Operation, f.Where = rv.Name, traffic.WhereResponse
			vs = append(vs, f)
		}
		if c == nil {
			x.Status = 0
		}
	case ex.checked:
		vs = append(vs, ex.answered...)
	case c == nil || !c.eof:
		// No answer (the client went away first), or the client went away
		// before the whole answer passed: nothing to check of the answer.
	default:
		decode(x, p.limit)
		vs = append(vs, p.checker.CheckResponse(x, rv)...)
	}
	if len(vs) > 0 || p.har != nil {
		x.URL = clientURL(x.Request) // only what is kept shows it
	}
	p.findings.Record(x, rv.Name, vs)
	if p.har != nil {
		hx := *x
		if ex.failure != nil || c == nil || !c.eof {
			hx.Status = 0 // no whole answer: the recording has the request alone
		}
		if err := p.har.Write(&hx, time.Since(ex.start)); err != nil {
			p.logger.Warn("HAR: cannot write", "error", err)
		}
	}
}

// A counter counts the bytes of a request body that streams past the
// check limit. The transport reads the body in a goroutine of its own,
// which may still be reading when the backend has answered early.
type counter struct {
	r io.Reader
	n atomic.Int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
