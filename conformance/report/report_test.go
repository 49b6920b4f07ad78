package report

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

const (
	appJSON  = "application/json"
	notFound = `{"code":"not_found","message":"no pet 3","status":404}`
)

// exchangeOf builds an exchange from a request line, its body and an
// answer; the request carries a key.
func exchangeOf(method, target, reqBody string, reqHeader http.Header, status int, respType, respBody string) *exchange.Exchange {
	if reqHeader == nil {
		reqHeader = http.Header{"Authorization": {"Bearer k"}, "Content-Type": {appJSON}}
	}
	return &exchange.Exchange{Method: method, URL: "http://127.0.0.1" + target, Header: reqHeader, Body: []byte(reqBody), BodySize: int64(len(reqBody)),
		Status: status, RespHeader: http.Header{"Content-Type": {respType}}, RespBody: []byte(respBody), RespSize: int64(len(respBody))}
}

// TestTraffic checks the Run of checked traffic as JUnit: one case per
// operation and rule, failed where the traffic broke it, skipped where the
// operation saw none.
func TestTraffic(t *testing.T) {
	c, _ := spec.Shared()
	f := spec.NewFindings(c, spec.FindingsOptions{})
	judge := spec.NewJudge(c, nil)
	for _, x := range []*exchange.Exchange{
		exchangeOf("GET", "/v1/inventory", "", nil, 200, "text/plain", "[]"),
		exchangeOf("GET", "/v1/inventory", "", nil, 200, "text/plain", "[]"),
		exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":1}`, nil, 200, appJSON, `{"petId":3,"quantity":1,"status":"sold"}`),
		exchangeOf("GET", "/v1/nowhere", "", nil, 404, appJSON, notFound),
	} {
		rv, vs := judge.Exchange(x)
		f.Record(x, rv.Name, vs)
	}
	b := Traffic("contract proxy", c, f).JUnit(nil)
	var doc junitSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	perOp := len(spec.Rules) - 1
	s := doc.Suites[0]
	if want := 4*perOp + 1; s.Tests != want || doc.Tests != want {
		t.Errorf("%d test cases; want %d (4 operations × %d rules, and requests to no operation)", s.Tests, want, perOp)
	}
	if s.Failures != 2 || s.Skipped != 2*perOp {
		t.Errorf("%d failures, %d skipped; want 2 (the list's Content-Type, the unknown path) and the 2 operations without traffic", s.Failures, s.Skipped)
	}
	for _, c := range s.Cases {
		if c.Failure != nil && !(c.Classname == "listInventory" && c.Name == spec.RuleResponseType || c.Classname == noOperation && c.Name == spec.RuleOperationUnknown) {
			t.Errorf("unexpected failure %s %s: %s", c.Classname, c.Name, c.Failure.Message)
		}
		if c.Classname == "listInventory" && c.Name == spec.RuleResponseType && !strings.Contains(c.Failure.Text, "2×") {
			t.Errorf("the failure does not count the group: %s", c.Failure.Text)
		}
	}
	var text bytes.Buffer
	Findings(&text, f)
	if !strings.HasPrefix(text.String(), "3 violations and 0 warnings in 2 groups") {
		t.Errorf("text report starts %q", strings.SplitN(text.String(), "\n", 2)[0])
	}
}
