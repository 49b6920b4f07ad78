package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A preference is what a request's Prefer header asks of the mock, with
// Prism's words where Prism has one: code=N answers status N, example=NAME
// answers the contract's named example, delay=MS waits before answering.
type preference struct {
	code    int
	example string
	delay   time.Duration
}

// ignoredPreferences are the preferences RFC 7240 and its registry define;
// a request may carry them for a real server's sake, and the mock ignores
// them. Any other preference is a mistake worth a 400.
var ignoredPreferences = []string{"respond-async", "return", "wait", "handling"}

// parsePrefer reads the Prefer headers (RFC 7240: comma-separated
// preferences, each token[=value], parameters after ';' ignored). A
// preference given twice, an unknown one, or a value out of range is an
// error that says so.
func parsePrefer(values []string, maxDelay time.Duration) (preference, error) {
	var p preference
	seen := map[string]bool{}
	for _, header := range values {
		for _, item := range strings.Split(header, ",") {
			item, _, _ = strings.Cut(item, ";")
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, value, _ := strings.Cut(item, "=")
			name = strings.ToLower(strings.TrimSpace(name))
			value = strings.Trim(strings.TrimSpace(value), `"`)
			if seen[name] {
				return p, fmt.Errorf("Prefer: %s is given twice", name)
			}
			seen[name] = true
			switch name {
			case "code":
				n, err := strconv.Atoi(value)
				if err != nil || n < 100 || n > 599 {
					return p, fmt.Errorf("Prefer: code=%q: want an HTTP status from 100 to 599", value)
				}
				p.code = n
			case "example":
				if value == "" {
					return p, fmt.Errorf("Prefer: example: want the name of one of the contract's examples")
				}
				p.example = value
			case "delay":
				ms, err := strconv.Atoi(value)
				if err != nil || ms < 0 {
					return p, fmt.Errorf("Prefer: delay=%q: want a whole number of milliseconds", value)
				}
				if int64(ms) > maxDelay.Milliseconds() { // compared before multiplying: no overflow
					return p, fmt.Errorf("Prefer: delay=%d is longer than the mock's cap of %d ms (--max-delay)", ms, maxDelay.Milliseconds())
				}
				p.delay = time.Duration(ms) * time.Millisecond
			default:
				if !slices.Contains(ignoredPreferences, name) {
					return p, fmt.Errorf("Prefer: %q is not a preference the mock knows; it knows code=N, example=NAME and delay=MS", name)
				}
			}
		}
	}
	return p, nil
}

// String renders the preference for the journal and the access log.
func (p preference) String() string {
	var parts []string
	if p.code != 0 {
		parts = append(parts, "code="+strconv.Itoa(p.code))
	}
	if p.example != "" {
		parts = append(parts, "example="+p.example)
	}
	if p.delay > 0 {
		parts = append(parts, "delay="+strconv.FormatInt(p.delay.Milliseconds(), 10))
	}
	return strings.Join(parts, ", ")
}

// forced reports whether the preference replaces the operation's own
// answer: a code other than the one the handler gives, or an example.
func (p preference) forced(natural int) bool {
	return p.example != "" || (p.code != 0 && p.code != natural)
}

// answerForced writes the answer the preference asks for, if the contract
// documents it for op; otherwise a 400 that says what the contract has.
func answerForced(w http.ResponseWriter, r *http.Request, op *spec.Operation, p preference) {
	status := p.code
	var resp *spec.Response
	if p.example != "" && status == 0 {
		// The first response, 2xx first, that has the example.
		for _, rs := range op.Responses {
			if rs.Example(p.example) != nil && (resp == nil || rs.Code[0] == '2' && resp.Code[0] != '2') {
				resp = rs
			}
		}
		if resp == nil {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference,
				fmt.Sprintf("Prefer: example=%s: %s has no example of that name; it has %s", p.example, op.Name(), exampleNames(op)))
			return
		}
		if status, _ = strconv.Atoi(resp.Code); status == 0 {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference,
				fmt.Sprintf("Prefer: example=%s belongs to the %s response; add code=N to say which status to answer", p.example, resp.Code))
			return
		}
	}
	if resp == nil {
		if resp = op.Response(status); resp == nil {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference,
				fmt.Sprintf("Prefer: code=%d is not documented for %s (documented: %s)", status, op.Name(), strings.Join(op.Codes(), ", ")))
			return
		}
	}
	switch {
	case p.example != "":
		ex := resp.Example(p.example)
		if ex == nil {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference,
				fmt.Sprintf("Prefer: example=%s: the %s response of %s has no example of that name; it has %s", p.example, resp.Code, op.Name(), names(resp.Examples)))
			return
		}
		if len(ex.Problems) > 0 {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference, staleExample(op, resp, ex))
			return
		}
		httpapi.WriteJSON(w, status, slices.Concat(ex.JSON, newline))
	case len(resp.MediaTypes) == 0:
		// The contract gives no body for this status: none is sent.
		w.Header()["Cache-Control"] = httpapi.NoStore
		w.WriteHeader(status)
	case status >= 400:
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="inventory"`)
		}
		msg := fmt.Sprintf("forced by the request's Prefer: code=%d", status)
		if resp.Description != "" {
			msg += "; the contract says: " + exchange.FirstLine(resp.Description)
		}
		httpapi.WriteError(w, r, status, codeFor(status), msg)
	case len(resp.Examples) > 0:
		// The first example that matches its schema.
		i := slices.IndexFunc(resp.Examples, func(ex spec.Example) bool { return len(ex.Problems) == 0 })
		if i < 0 {
			httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference, staleExample(op, resp, &resp.Examples[0]))
			return
		}
		httpapi.WriteJSON(w, status, slices.Concat(resp.Examples[i].JSON, newline))
	default:
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidPreference,
			fmt.Sprintf("Prefer: code=%d: the contract gives a body for it but no example, so the mock has nothing to answer; add an example to the %s response of %s", status, resp.Code, op.Name()))
	}
}

// ownCodes are the Error codes the mock has of its own, by status.
var ownCodes = map[int]string{
	http.StatusBadRequest: httpapi.CodeInvalidBody, http.StatusUnauthorized: httpapi.CodeUnauthorized,
	http.StatusNotFound: httpapi.CodeNotFound, http.StatusMethodNotAllowed: httpapi.CodeMethodNotAllowed,
	http.StatusInternalServerError: httpapi.CodeInternal, http.StatusNotImplemented: httpapi.CodeNotImplemented,
	http.StatusServiceUnavailable: httpapi.CodeUnavailable,
}

// codeFor returns the Error code the mock uses for an error status: its
// own where it has one, else the status text in snake case.
func codeFor(status int) string {
	if code, ok := ownCodes[status]; ok {
		return code
	}
	text := http.StatusText(status)
	if text == "" {
		return "error_" + strconv.Itoa(status)
	}
	return strings.ToLower(strings.NewReplacer(" ", "_", "-", "_", "'", "").Replace(text))
}

// exampleNames lists the names of every example of op's responses.
func exampleNames(op *spec.Operation) string {
	var all []spec.Example
	for _, r := range op.Responses {
		all = append(all, r.Examples...)
	}
	return names(all)
}

func names(examples []spec.Example) string {
	if len(examples) == 0 {
		return "none"
	}
	out := make([]string, len(examples))
	for i, e := range examples {
		out[i] = e.Name
	}
	return strings.Join(out, ", ")
}

// staleExample says why the mock will not send an example: it no longer
// matches the contract's schema for its answer.
func staleExample(op *spec.Operation, r *spec.Response, ex *spec.Example) string {
	return fmt.Sprintf("Prefer: example=%s: the %s response of %s has this example, but it does not match the contract (%s), so the mock will not send it; update or remove the example in the spec",
		ex.Name, r.Code, op.Name(), spec.Join(ex.Problems))
}

// exampleWarnings names, for the start-up log, each example of the
// contract that does not match its schema, and the problem.
func exampleWarnings(c *spec.Contract) []string {
	var out []string
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			for _, ex := range r.Examples {
				if len(ex.Problems) > 0 {
					out = append(out, fmt.Sprintf("%s: response %s: example %s does not match the contract (%s); Prefer: example=%s answers 400 until it is updated or removed",
						op.Name(), r.Code, ex.Name, spec.Join(ex.Problems), ex.Name))
				}
			}
		}
	}
	return out
}
