package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A judgeInput is one exchange to judge: the request and its answer.
type judgeInput struct {
	Method             string            `json:"method" jsonschema:"the request's method, such as PATCH"`
	Path               string            `json:"path" jsonschema:"the request's path, with its query if any, such as /v1/inventory/7; the contract's base path is added where it is missing"`
	RequestBody        any               `json:"requestBody,omitempty" jsonschema:"the request body, as JSON, such as {\"quantity\": 5}"`
	RequestBodyText    string            `json:"requestBodyText,omitempty" jsonschema:"the request body as text, for one that is not valid JSON; instead of requestBody"`
	RequestContentType string            `json:"requestContentType,omitempty" jsonschema:"the request's Content-Type; absent: application/json where there is a body"`
	NoCredential       bool              `json:"noCredential,omitempty" jsonschema:"true: the request carried no Authorization header; absent: it carried a bearer key"`
	Status             int               `json:"status" jsonschema:"the answer's status, such as 200"`
	Body               any               `json:"body,omitempty" jsonschema:"the answer's body, as JSON"`
	BodyText           string            `json:"bodyText,omitempty" jsonschema:"the answer's body as text, for one that is not valid JSON; instead of body"`
	ContentType        string            `json:"contentType,omitempty" jsonschema:"the answer's Content-Type; absent: application/json where there is a body"`
	Headers            map[string]string `json:"headers,omitempty" jsonschema:"other headers of the answer, such as {\"Retry-After\": \"1\"}"`
}

// A judgement is the contract's verdict on an exchange.
type judgement struct {
	Operation  string   `json:"operation"` // the operation's name; METHOD path where none matched
	Path       string   `json:"path"`      // the path judged
	Valid      bool     `json:"valid"`     // no violation of severity error
	Violations []judged `json:"violations"`
}

// A judged is one violation, as the validating proxy reports it.
type judged struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Where    string `json:"where"`
	Path     string `json:"path"`
	Message  string `json:"message"`
}

// judges keeps the judge of the contract in force, made again when the
// contract is reloaded.
type judges struct {
	mu sync.Mutex // guards c and j
	c  *spec.Contract
	j  *spec.Judge
}

func (js *judges) of(c *spec.Contract) *spec.Judge {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.c != c {
		js.c, js.j = c, spec.NewJudge(c, nil)
	}
	return js.j
}

// judgeExchange answers judge_exchange.
// raw holds the arguments as sent: the bodies are read from it, numbers
// exact (the SDK decodes them into float64).
func (a *admin) judgeExchange(in judgeInput, raw map[string]json.RawMessage) (output, error) {
	c := a.m.Contract()
	x, err := exchangeOf(in, raw, c.BasePath)
	if err != nil {
		return nil, err
	}
	rv, vs := a.judges.of(c).Exchange(x)
	out := judgement{Operation: rv.Name, Path: x.Path, Valid: true, Violations: []judged{}}
	for _, v := range vs {
		sev := spec.Severity(v.Rule)
		if sev == spec.SeverityError {
			out.Valid = false
		}
		out.Violations = append(out.Violations, judged{Rule: v.Rule, Severity: sev, Where: v.Where, Path: v.Path, Message: v.Message})
	}
	return out, nil
}

// exchangeOf makes the exchange a judgeInput describes, or says what is
// wrong with it.
func exchangeOf(in judgeInput, raw map[string]json.RawMessage, base string) (*exchange.Exchange, error) {
	method := strings.ToUpper(strings.TrimSpace(in.Method))
	var errs []error
	if method == "" || strings.ContainsAny(method, " /:") {
		errs = append(errs, fmt.Errorf("method: %q is not an HTTP method; give one such as GET or PATCH", in.Method))
	}
	if in.Status < 100 || in.Status > 599 {
		errs = append(errs, fmt.Errorf("status: %d is not an HTTP status; give one from 100 to 599", in.Status))
	}
	u, err := url.Parse(in.Path)
	switch {
	case err != nil:
		errs = append(errs, fmt.Errorf("path: %v", err))
	case !strings.HasPrefix(in.Path, "/"):
		errs = append(errs, fmt.Errorf("path: %q does not start with /; give one such as %s/inventory", in.Path, base))
	}
	reqBody, reqErr := bodyOf("requestBody", raw["requestBody"], in.RequestBodyText)
	respBody, respErr := bodyOf("body", raw["body"], in.BodyText)
	if err := errors.Join(append(errs, reqErr, respErr)...); err != nil {
		return nil, err
	}
	path := u.Path
	if base != "" && path != base && !strings.HasPrefix(path, base+"/") {
		path = base + path
	}
	reqHeader := http.Header{}
	if !in.NoCredential {
		reqHeader.Set("Authorization", "Bearer judged-by-the-mcp-server")
	}
	if ct := contentType(in.RequestContentType, reqBody); ct != "" {
		reqHeader.Set("Content-Type", ct)
	}
	respHeader := http.Header{}
	for k, v := range in.Headers {
		respHeader.Set(k, v)
	}
	if ct := contentType(in.ContentType, respBody); ct != "" {
		respHeader.Set("Content-Type", ct)
	}
	target := path
	if u.RawQuery != "" {
		target += "?" + u.RawQuery
	}
	return &exchange.Exchange{
		Method: method, URL: "http://localhost" + target, Path: path,
		Header: reqHeader, Body: reqBody, BodySize: int64(len(reqBody)),
		Status: in.Status, RespHeader: respHeader, RespBody: respBody, RespSize: int64(len(respBody)),
	}, nil
}

// bodyOf returns a body given as JSON (v, as sent) or as text, not both;
// nil for none.
func bodyOf(name string, v json.RawMessage, text string) ([]byte, error) {
	if string(v) == "null" {
		v = nil
	}
	switch {
	case v != nil && text != "":
		return nil, fmt.Errorf("%s and %sText: give one of them", name, name)
	case text != "":
		return []byte(text), nil
	}
	return v, nil
}

// contentType is the Content-Type of a body: the one given, else JSON
// where there is a body.
func contentType(given string, body []byte) string {
	if given != "" || body == nil {
		return given
	}
	return "application/json"
}
