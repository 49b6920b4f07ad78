package spec

import (
	"bytes"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// TestTraffic checks the Run of checked traffic as JUnit: one case per
// operation and rule, failed where the traffic broke it, skipped where the
// operation saw none.
func TestTraffic(t *testing.T) {
	c, _ := Shared()
	f := NewFindings(c, FindingsOptions{})
	judge := NewJudge(c, nil)
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
	var doc struct {
		Tests  int `xml:"tests,attr"`
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
			Cases    []struct {
				Classname string `xml:"classname,attr"`
				Name      string `xml:"name,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	perOp := len(Rules) - 1
	s := doc.Suites[0]
	if want := 4*perOp + 1; s.Tests != want || doc.Tests != want {
		t.Errorf("%d test cases; want %d (4 operations × %d rules, and requests to no operation)", s.Tests, want, perOp)
	}
	if s.Failures != 2 || s.Skipped != 2*perOp {
		t.Errorf("%d failures, %d skipped; want 2 (the list's Content-Type, the unknown path) and the 2 operations without traffic", s.Failures, s.Skipped)
	}
	for _, c := range s.Cases {
		if c.Failure != nil && !(c.Classname == "listInventory" && c.Name == RuleResponseType || c.Classname == noOperation && c.Name == RuleOperationUnknown) {
			t.Errorf("unexpected failure %s %s: %s", c.Classname, c.Name, c.Failure.Message)
		}
		if c.Classname == "listInventory" && c.Name == RuleResponseType && !strings.Contains(c.Failure.Text, "2×") {
			t.Errorf("the failure does not count the group: %s", c.Failure.Text)
		}
	}
	var text bytes.Buffer
	_ = WriteFindings(&text, f)
	if !strings.HasPrefix(text.String(), "3 violations and 0 warnings in 2 groups") {
		t.Errorf("text report starts %q", strings.SplitN(text.String(), "\n", 2)[0])
	}
}

// TestTrafficReports renders the findings of traffic a hostile backend
// answered, its bodies holding markup and the client's key, as each
// format: the violations grouped by rule with their example as a curl
// line, the coverage of the documented responses, nothing of the key.
func TestTrafficReports(t *testing.T) {
	const key = "tk-traffic-secret-0042"
	c, _ := Shared()
	rd := exchange.NewRedactor(exchange.Secret{Value: key, Var: "INVENTORY_API_KEY"})
	f := NewFindings(c, FindingsOptions{Redactor: rd})
	judge := NewJudge(c, nil)
	auth := http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {appJSON}}
	hostile := `[{"petId":1,"quantity":-1,"status":"<script>alert('` + key + `')</script>|` + "```" + `"}]`
	for _, x := range []*exchange.Exchange{
		exchangeOf("GET", "/v1/inventory", "", auth, 200, appJSON, hostile),
		exchangeOf("GET", "/v1/inventory", "", auth, 200, appJSON, hostile),
		exchangeOf("GET", "/v1/inventory", "", http.Header{}, 401, appJSON, `{"code":"unauthorized","message":"no key","status":401}`),
		exchangeOf("PATCH", "/v1/inventory/3", `{"quantity":1}`, auth, 418, "text/plain", "I'm a teapot | <b>"+key+"</b>"),
	} {
		rv, vs := judge.Exchange(x)
		f.Record(x, rv.Name, vs)
	}
	run := Traffic("contract proxy", c, f)
	if len(run.Causes) == 0 || run.Causes[0].Name != RuleResponseBody || run.Causes[0].Count != 2 {
		t.Fatalf("causes %+v; want %s first, 2 violations", run.Causes, RuleResponseBody)
	}
	if e, d := run.Coverage.Figure(); e != 3 || d != 14 {
		t.Errorf("coverage %d of %d; want listInventory's 200 and 401 and updateInventory's default (the 418) of the 14 documented", e, d)
	}
	if obs := strings.Join(run.Observations, "\n"); !strings.Contains(obs, "updateInventory answered 418 ×1, which the contract documents only as default") {
		t.Errorf("observations %q; want the 418 the contract documents only as default", obs)
	}
	if why := run.Coverage.Operations[3].Responses[0].Why; why != "no traffic to this operation" {
		t.Errorf("why GET /store/orders 200 was not exercised: %q", why)
	}

	md := reporttest.ReadMarkdown(t, run.Markdown(f.Redactor()), key)
	var curl bool
	for _, b := range md.Blocks {
		// The key reads $INVENTORY_API_KEY, so that the line replays.
		curl = curl || strings.HasPrefix(b, "curl ") && strings.Contains(b, `"Authorization: Bearer $INVENTORY_API_KEY"`)
	}
	if !curl || !strings.Contains(md.Text, "Coverage: 21.4% (3 of 14 documented responses)") || !strings.Contains(md.Text, RuleResponseType) {
		t.Errorf("the Markdown lacks a curl line, the coverage or the cause of the 418:\n%s", run.Markdown(f.Redactor()))
	}
	page := reporttest.ReadHTML(t, run.HTML(f.Redactor()), key)
	if !strings.Contains(page.Text, "<script>alert('$INVENTORY_API_KEY')</script>") {
		t.Errorf("the HTML does not show the backend's body as text")
	}
	as := reporttest.ReadAnnotations(t, run.Annotations(f.Redactor()), key)
	if len(as) != len(run.Causes) {
		t.Errorf("%d annotations for %d causes", len(as), len(run.Causes))
	}
}
