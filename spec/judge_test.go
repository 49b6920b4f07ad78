package spec

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// exchange builds an exchange from a request line, its headers, body and
// an answer.
func exchangeOf(method, target, reqBody string, reqHeader http.Header, status int, respType, respBody string) *exchange.Exchange {
	if reqHeader == nil {
		reqHeader = http.Header{"Authorization": {"Bearer k"}}
		if reqBody != "" {
			reqHeader.Set("Content-Type", "application/json")
		}
	}
	x := &exchange.Exchange{Method: method, URL: "http://127.0.0.1" + target, Header: reqHeader, Body: []byte(reqBody), BodySize: int64(len(reqBody)),
		Status: status, RespHeader: http.Header{}, RespBody: []byte(respBody), RespSize: int64(len(respBody))}
	if respType != "" {
		x.RespHeader.Set("Content-Type", respType)
	}
	return x
}

const (
	item     = `{"petId":3,"quantity":7,"status":"available"}`
	appJSON  = "application/json"
	notFound = `{"code":"not_found","message":"no pet 3","status":404}`
)

func TestCheck(t *testing.T) {
	c, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	noAuth := http.Header{}
	basic := http.Header{"Authorization": {"Basic a2V5"}}
	bearerOnly := http.Header{"Authorization": {"Bearer"}}
	for _, tc := range []struct {
		name string
		x    *exchange.Exchange
		want string // the violations, "rule path" joined by ", "
	}{
		{"a good list", exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, "["+item+"]"), ""},
		{"a good update", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 200, appJSON, item), ""},
		{"5.0 is 5", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7.0}`, nil, 200, appJSON, item), ""},
		{"a documented 404", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 404, "application/json; charset=utf-8", notFound), ""},
		{"a 401 without a key", exchangeOf("GET", "/v1/inventory", "", noAuth, 401, appJSON, `{"code":"unauthorized","message":"m","status":401}`), "request-auth-missing header.Authorization"},
		{"HEAD, no body", exchangeOf("HEAD", "/v1/inventory", "", nil, 200, appJSON, ""), ""},
		{"a 501 where default documents it", exchangeOf("GET", "/v1/pets/1", "", nil, 501, appJSON, `{"code":"not_implemented","message":"m","status":501}`), ""},

		{"unknown path", exchangeOf("GET", "/v1/orders", "", nil, 404, appJSON, notFound), "request-operation-unknown url"},
		{"trailing slash", exchangeOf("GET", "/v1/inventory/", "", nil, 404, appJSON, notFound), "request-operation-unknown url"},
		{"unknown method", exchangeOf("DELETE", "/v1/inventory", "", nil, 405, appJSON, notFound), "request-operation-unknown url"},
		{"bad petId, rejected", exchangeOf("PATCH", "/v1/inventory/abc", `{"quantity":1}`, nil, 400, appJSON, `{"code":"x","message":"m","status":400}`), "request-parameter path.petId"},
		{"bad petId, accepted", exchangeOf("PATCH", "/v1/inventory/abc", `{"quantity":1}`, nil, 200, appJSON, item), "request-parameter path.petId, response-invalid-request-accepted status"},
		{"bad body", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":"x"}`, nil, 400, appJSON, `{"code":"x","message":"m","status":400}`), "request-body $.quantity"},
		{"malformed body", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":`, nil, 400, appJSON, `{"code":"x","message":"m","status":400}`), "request-body $.quantity"},
		{"text/plain body", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":1}`, http.Header{"Authorization": {"Bearer k"}, "Content-Type": {"text/plain"}}, 400, appJSON, `{"code":"x","message":"m","status":400}`), "request-content-type header.Content-Type"},
		{"no key, answered 200", exchangeOf("GET", "/v1/inventory", "", noAuth, 200, appJSON, "[]"), "request-auth-missing header.Authorization, response-auth-not-enforced status"},
		{"Basic, answered 200", exchangeOf("GET", "/v1/inventory", "", basic, 200, appJSON, "[]"), "request-auth-missing header.Authorization, response-auth-not-enforced status"},
		{"Bearer alone, answered 404", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":1}`, http.Header{"Authorization": bearerOnly["Authorization"], "Content-Type": {appJSON}}, 404, appJSON, notFound), "request-auth-missing header.Authorization, response-auth-not-enforced status"},
		{"201 for an update", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 201, appJSON, item), "response-body-schema $.code, response-body-schema $.message, response-body-schema $.status"}, // default: an Error
		{"422 for bad input", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":"x"}`, nil, 422, appJSON, `{"code":"x","message":"m","status":422}`), "request-body $.quantity"},
		{"500 as text", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":1}`, nil, 500, "text/plain", "boom"), "response-content-type header.Content-Type"},
		{"text/plain list", exchangeOf("GET", "/v1/inventory", "", nil, 200, "text/plain; charset=utf-8", "[]"), "response-content-type header.Content-Type"},
		{"no Content-Type", exchangeOf("GET", "/v1/inventory", "", nil, 200, "", "[]"), "response-content-type header.Content-Type"},
		{"unknown status in a list", exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, "["+item+`,{"petId":4,"quantity":1,"status":"lost"}]`), "response-body-schema $[1].status"},
		{"a malformed answer", exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, "[{"), "response-body-schema $[0]"},
		{"an item without quantity", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 200, appJSON, `{"petId":3,"status":"sold"}`), "response-body-schema $.quantity, response-echo-mismatch $.quantity"},
		{"old quantity echoed", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 200, appJSON, `{"petId":3,"quantity":6,"status":"sold"}`), "response-echo-mismatch $.quantity"},
		{"another pet answered", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 200, appJSON, `{"petId":4,"quantity":7,"status":"sold"}`), "response-echo-mismatch $.petId"},
		{"Error status wrong", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 404, appJSON, `{"code":"not_found","message":"m","status":500}`), "error-status-mismatch $.status"},
		{"Error code empty", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 404, appJSON, `{"code":"","message":"m","status":404}`), "error-field-empty $.code"},
		{"Error without status", exchangeOf("GET", "/v1/inventory", "", nil, 401, appJSON, `{"code":"x","message":"m"}`), "response-body-schema $.status"},
		{"429 with an Error", exchangeOf("GET", "/v1/inventory", "", nil, 429, appJSON, `{"code":"rate_limited","message":"m","status":429}`), ""},
		{"a large answer", func() *exchange.Exchange {
			x := exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, "[")
			x.RespSize = 10 << 20
			return x
		}(), "body-too-large-to-check $"},
		{"no answer", func() *exchange.Exchange {
			x := exchangeOf("GET", "/v1/inventory", "", nil, 0, "", "")
			x.Failure, x.Err = exchange.FailureNoAnswer, "connection refused"
			return x
		}(), "no-answer status"},
		{"an answer cut short", func() *exchange.Exchange {
			x := exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, "["+item)
			x.Failure, x.Err, x.RespSize = exchange.FailureCut, "unexpected EOF", 1000
			return x
		}(), "answer-incomplete $"},
		{"a body not recorded", func() *exchange.Exchange {
			x := exchangeOf("GET", "/v1/inventory", "", nil, 200, appJSON, "")
			x.RespNotRecorded = true
			return x
		}(), "body-not-recorded $"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := violations(t, c, tc.x); g != tc.want {
				t.Errorf("violations = %q; want %q", g, tc.want)
			}
		})
	}
}

// violations checks x against c and returns its violations, "rule path"
// joined by ", ", checking that each is where its rule says.
func violations(t *testing.T, c *Contract, x *exchange.Exchange) string {
	t.Helper()
	var got []string
	_, vs := NewJudge(c, nil).Exchange(x)
	for _, v := range vs {
		got = append(got, v.Rule+" "+v.Path)
		if r, ok := RuleNamed(v.Rule); !ok || (r.Where != "" && r.Where != v.Where) {
			t.Errorf("%s: where %q; the rule says %q", v.Rule, v.Where, r.Where)
		}
	}
	return strings.Join(got, ", ")
}

// TestUndocumentedStatus checks the statuses a contract without a default
// response leaves undocumented: the embedded one documents every other
// error through its default, so the contract here is it without them.
func TestUndocumentedStatus(t *testing.T) {
	doc := strings.ReplaceAll(string(Document), "        default:\n          $ref: '#/components/responses/OtherError'\n", "")
	if doc == string(Document) {
		t.Fatal("spec/openapi.yaml has no default response to take out")
	}
	c, err := Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		x    *exchange.Exchange
		want string
	}{
		{"201 for an update", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 201, appJSON, item), "response-status-undocumented status"},
		{"422 for bad input", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":"x"}`, nil, 422, appJSON, `{"code":"x","message":"m","status":422}`), "request-body $.quantity, response-status-undocumented status"},
		{"500 as text", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":1}`, nil, 500, "text/plain", "boom"), "response-status-undocumented status, error-body-schema header.Content-Type"},
		{"429 with an Error", exchangeOf("GET", "/v1/inventory", "", nil, 429, appJSON, `{"code":"rate_limited","message":"m","status":429}`), "response-status-undocumented status"},
		{"a documented 404", exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":7}`, nil, 404, appJSON, notFound), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if g := violations(t, c, tc.x); g != tc.want {
				t.Errorf("violations = %q; want %q", g, tc.want)
			}
		})
	}
}

func TestRuleFilter(t *testing.T) {
	c, _ := Shared()
	f, err := NewRuleFilter([]string{"request-*", "response-auth-not-enforced"})
	if err != nil {
		t.Fatal(err)
	}
	x := exchangeOf("GET", "/v1/inventory", "", http.Header{}, 200, "text/plain", "[]")
	var got []string
	_, vs := NewJudge(c, f).Exchange(x)
	for _, v := range vs {
		got = append(got, v.Rule)
	}
	if strings.Join(got, ",") != "response-content-type" {
		t.Errorf("filtered violations = %q; want only response-content-type", got)
	}
	if f, err := NewRuleFilter([]string{"upstream-*"}); err != nil || f.Keeps(RuleNoAnswer) || f.Keeps(RuleIncomplete) || !f.Keeps(RuleResponseBody) {
		t.Errorf("NewRuleFilter(upstream-*) = %v, %v; want the former names' pattern to stand for no-answer and answer-incomplete, and no other rule", f, err)
	}
	if f, err := NewRuleFilter([]string{"upstream-unreachable"}); err != nil || f.Keeps(RuleNoAnswer) {
		t.Errorf("NewRuleFilter(upstream-unreachable) = %v, %v; want the former name to stand for no-answer", f, err)
	}
	for _, bad := range []string{"reqest-*", "[", "body-too-large"} {
		if _, err := NewRuleFilter([]string{bad}); err == nil {
			t.Errorf("NewRuleFilter(%q): no error", bad)
		}
	}
}

// TestClassifyFollowsCheckResponse pins what classify assumes of
// Operation.CheckResponse: documented headers first, an undocumented
// Content-Type last and alone after them, the body's problems otherwise.
func TestClassifyFollowsCheckResponse(t *testing.T) {
	c, err := Load([]byte(`openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    get:
      responses:
        '200':
          description: ok
          headers:
            X-Rate:
              required: true
              schema: {type: integer}
          content:
            application/json:
              schema:
                type: object
                required: [Content-Type]
                properties:
                  Content-Type: {type: string}
`))
	if err != nil {
		t.Fatal(err)
	}
	op := c.Operations[0]
	for _, tc := range []struct {
		header http.Header
		body   string
		want   string
	}{
		{http.Header{"Content-Type": {appJSON}}, `{}`, "response-header header.X-Rate, response-body-schema $.Content-Type"},
		{http.Header{"Content-Type": {"text/html"}, "X-Rate": {"x"}}, `{}`, "response-header header.X-Rate, response-content-type header.Content-Type"},
		{http.Header{"Content-Type": {appJSON}, "X-Rate": {"1"}}, `{"Content-Type":1}`, "response-body-schema $.Content-Type"},
	} {
		var got []string
		for _, v := range classify(op.CheckResponse(200, tc.header, []byte(tc.body))) {
			got = append(got, v.Rule+" "+v.Path)
		}
		if g := strings.Join(got, ", "); g != tc.want {
			t.Errorf("%v %s: %q; want %q", tc.header, tc.body, g, tc.want)
		}
	}
}

// TestRuleRegistry checks the one registry: every rule, the Judge's and
// the suite's, has one name, a severity and a meaning, and RuleNamed finds
// it.
func TestRuleRegistry(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range append(slices.Clone(Rules), SuiteRules...) {
		if seen[r.Name] {
			t.Errorf("rule %q is registered twice", r.Name)
		}
		seen[r.Name] = true
		if r.About == "" || (r.Severity != SeverityError && r.Severity != SeverityWarning) {
			t.Errorf("rule %q: about %q, severity %q; want a meaning and error or warning", r.Name, r.About, r.Severity)
		}
		if got, ok := RuleNamed(r.Name); !ok || got != r {
			t.Errorf("RuleNamed(%q) = %v, %v; want %v", r.Name, got, ok, r)
		}
	}
	if _, err := NewRuleFilter([]string{RuleLostUpdate}); err == nil {
		t.Errorf("NewRuleFilter(%q): no error; want the Judge's filter to refuse a rule only the suite gives", RuleLostUpdate)
	}
}
