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
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A pending exchange is one forwarded request while it is served: what the
// judge will get, and how the backend's side went.
type pending struct {
	x        exchange.Exchange
	start    time.Time
	rv       *spec.RequestVerdict // judged before forwarding (Enforce); else after
	reqRest  *counter             // the rest of a request body too large to keep, as it streams
	resp     *capture             // the answer's body as it passes; nil: no answer
	answered []spec.Violation     // the answer's violations, where Enforce judged them already
	checked  bool                 // answered holds the answer's verdict
	budget   *budget              // the proxy's, which held came from
	held     int64                // bytes taken from budget for the checks
}

// pendingKey carries the pending exchange in the forwarded request's
// context.
type pendingKey struct{}

// errEnforced is ModifyResponse's error for an answer Enforce stops.
var errEnforced = errors.New("the answer breaks the contract")

// forward sends r to the backend and its answer back, and checks both.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	// The backend's answer passes with its own headers: not the access
	// log's request id.
	delete(w.Header(), httpapi.RequestIDHeader)
	if exchange.IsPreflight(r.Method, r.Header) || r.Header.Get("Upgrade") != "" {
		p.rp.ServeHTTP(w, r) // browser mechanics and protocol switches: no contract describes them
		return
	}
	ex := &pending{start: time.Now(), budget: p.budget}
	// A request body in a content coding is not decoded: it passes unchecked.
	ex.x = exchange.Exchange{Time: ex.start, Method: r.Method, URL: clientURL(r), Path: r.URL.Path, Header: r.Header, BodyEncoding: coding(r.Header)}
	defer ex.release()
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0: // no body to read
	case !ex.take(int64(min(uint64(r.ContentLength), uint64(p.limit))) + 1):
		// No room in the budget to hold it for the check (its length, or
		// the limit where that is unknown): it passes unchecked, as a body
		// past the limit does, judged as one of its announced length (1:
		// unknown) until it has passed.
		ex.reqRest = &counter{r: r.Body}
		ex.x.BodySize = max(r.ContentLength, 1)
		r.Body = streamBody{ex.reqRest, r.Body}
	default:
		body, err := httpapi.ReadUpTo(r.Body, p.limit, r.ContentLength)
		if err != nil {
			httpapi.WriteBodyError(w, r, err) // as the mock answers it; nothing reaches the backend
			return
		}
		ex.x.Body, ex.x.BodySize = body, int64(len(body))
		if len(body) > p.limit {
			ex.x.Body = body[:p.limit]
			ex.reqRest = &counter{r: r.Body}
			ex.reqRest.n.Store(int64(len(body)))
			r.Body = streamBody{io.MultiReader(bytes.NewReader(body), ex.reqRest), r.Body}
		} else {
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
	}
	if p.enforce && p.reject(w, r, ex) {
		return
	}
	// In a defer, so that an answer whose copy panics
	// (http.ErrAbortHandler, the backend cut it short) is recorded too.
	defer p.finish(ex)
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), pendingKey{}, ex)))
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
func (p *Proxy) reject(w http.ResponseWriter, r *http.Request, ex *pending) bool {
	rv := p.judge.Request(&ex.x)
	ex.rv = rv
	// Never one without a credential (the backend answers 401 first), and
	// only for a violation other than a missing credential or a body too
	// large to check.
	if !rv.Invalid() || rv.NoCredential || !slices.ContainsFunc(rv.Violations, func(v spec.Violation) bool {
		return v.Rule != spec.RuleAuthMissing && v.Rule != spec.RuleTooLarge
	}) {
		return false
	}
	switch {
	case rv.Op == nil && rv.Problems[0].Kind == spec.KindMethod:
		httpapi.WriteError(w, r, http.StatusMethodNotAllowed, httpapi.CodeMethodNotAllowed, rv.Problems[0].Message)
	case rv.Op == nil:
		httpapi.WriteError(w, r, http.StatusNotFound, httpapi.CodeNotFound, rv.Problems[0].Message)
	default:
		httpapi.WriteProblems(w, r, rv.Problems)
	}
	p.findings.Record(&ex.x, rv.Name, rv.Violations)
	p.observe(ex, rv, rv.Violations)
	return true
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
	ex, _ := resp.Request.Context().Value(pendingKey{}).(*pending)
	if ex == nil {
		return nil
	}
	ex.x.Status, ex.x.RespHeader = resp.StatusCode, resp.Header
	c := &capture{body: resp.Body, limit: p.limit, keep: true, ex: ex}
	ex.resp = c
	if !p.enforce {
		if n := resp.ContentLength; n > 0 && n <= int64(p.limit) {
			if ex.take(n) {
				c.buf = make([]byte, 0, n)
			} else {
				c.keep, c.over = false, true
			}
		}
		resp.Body = c
		return nil
	}
	c.keep = false
	if n := resp.ContentLength; !ex.take(int64(min(uint64(n), uint64(p.limit))) + 1) {
		// No room in the budget to hold it for the check (its length,
		// or the limit where that is unknown): it passes unchecked, as
		// a body past the limit does.
		c.over = true
		resp.Body = c
		return nil
	}
	head, err := httpapi.ReadUpTo(c, p.limit, resp.ContentLength)
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
	ex.decode(p.limit)
	ex.answered, ex.checked = p.judge.Response(&ex.x, ex.rv), true
	if slices.ContainsFunc(ex.answered, func(v spec.Violation) bool { return spec.Severity(v.Rule) == spec.SeverityError }) {
		return errEnforced
	}
	return nil
}

// fill copies what the capture saw of the answer into the exchange.
func (ex *pending) fill() {
	if ex.resp != nil {
		ex.x.RespBody, ex.x.RespSize = ex.resp.buf, ex.resp.n
	}
	if ex.reqRest != nil {
		ex.x.BodySize = max(ex.x.BodySize, ex.reqRest.n.Load())
	}
}

// upstreamError answers when there is no answer to pass: the backend
// could not be reached (502), sent nothing for the timeout (504), cut its
// answer short (502), or, with Enforce, answered what breaks the contract
// (502). A client that went away gets nothing.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	ex, _ := r.Context().Value(pendingKey{}).(*pending)
	if ex == nil {
		httpapi.WriteError(w, r, http.StatusBadGateway, "upstream_unreachable", "the backend could not be reached")
		return
	}
	host := p.upstream.Host
	rd := p.findings.Redactor().For(&ex.x)
	switch {
	case errors.Is(err, errEnforced):
		msgs := make([]string, 0, len(ex.answered))
		for _, v := range ex.answered {
			if spec.Severity(v.Rule) == spec.SeverityError {
				msgs = append(msgs, v.Rule+" "+v.Path+": "+v.Message)
			}
		}
		msg := fmt.Sprintf("the backend answered %d, which breaks the contract: %s", ex.x.Status, strings.Join(msgs, "; "))
		httpapi.WriteError(w, r, http.StatusBadGateway, "contract_violation", rd.String(msg))
		return
	case isTimeout(err):
		ex.x.Failure, ex.x.Err = exchange.FailureNoAnswer, fmt.Sprintf("the backend at %s sent nothing for %s", host, p.timeout)
		httpapi.WriteError(w, r, http.StatusGatewayTimeout, "upstream_timeout", ex.x.Err)
	case r.Context().Err() != nil:
		return // the client went away
	case ex.resp != nil:
		ex.x.Failure, ex.x.Err = exchange.FailureCut, fmt.Sprintf("the backend's answer ended early: %v", err)
		httpapi.WriteError(w, r, http.StatusBadGateway, "upstream_incomplete", rd.String(fmt.Sprintf("the backend's answer (%d) ended early: %v", ex.x.Status, err)))
	default:
		ex.x.Failure, ex.x.Err = exchange.FailureNoAnswer, fmt.Sprintf("the backend at %s could not be reached: %v", host, err)
		httpapi.WriteError(w, r, http.StatusBadGateway, "upstream_unreachable", rd.String(ex.x.Err))
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
func (p *Proxy) finish(ex *pending) {
	ex.fill()
	x := &ex.x
	rv := ex.rv
	if rv == nil {
		rv = p.judge.Request(x)
	}
	vs := rv.Violations
	c := ex.resp
	if x.Failure == "" && c != nil && c.err != nil {
		// Cut short while it streamed to the client.
		x.Failure, x.Err = exchange.FailureCut, fmt.Sprintf("the backend's answer ended early: %v", c.err)
		if isTimeout(c.err) {
			x.Err = fmt.Sprintf("the backend at %s stopped sending its answer for %s", p.upstream.Host, p.timeout)
		}
	}
	switch {
	case x.Failure != "":
		if c == nil {
			x.Status = 0
		}
		vs = append(vs, p.judge.Response(x, rv)...)
	case ex.checked:
		vs = append(vs, ex.answered...)
	case c == nil || !c.eof:
		// No answer (the client went away first), or the client went away
		// before the whole answer passed: nothing to judge of the answer.
	default:
		ex.decode(p.limit)
		vs = append(vs, p.judge.Response(x, rv)...)
	}
	p.findings.Record(x, rv.Name, vs)
	p.observe(ex, rv, vs)
	if p.har != nil {
		hx := *x
		hx.Elapsed = time.Since(ex.start)
		if x.Failure == "" && (c == nil || !c.eof) {
			hx.Status = 0 // the client went away first: the recording has the request alone
		}
		if err := p.har.Write(&hx); err != nil {
			p.logger.Warn("HAR: cannot write", "error", err)
		}
	}
}

// observe counts the exchange in the metrics, where there are any: the
// backend's status (0 for none: unreachable, silent, or refused by
// Enforce before it was forwarded) and the violations kept by the filter.
func (p *Proxy) observe(ex *pending, rv *spec.RequestVerdict, vs []spec.Violation) {
	if p.metrics == nil {
		return
	}
	status := ex.x.Status
	if ex.x.Failure == exchange.FailureNoAnswer {
		status = 0
	}
	p.metrics.Exchange(rv.Op, status, time.Since(ex.start), vs)
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
