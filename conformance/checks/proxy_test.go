package checks

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/mockserver/proxy"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// proxyFinds lists, for each broken server a validating proxy can catch,
// the violations of the backend's answers the probes must show: operation,
// rule and path, and nothing else. proxyBlind says, for each of the
// others, why no single exchange shows its breakage, or that what it does
// is allowed. Every broken server is in one of the two.
var (
	proxyFinds = map[string][]string{
		"list-one-record-in-stock":     {"listInventory response-body-schema $[*].status"},
		"list-record-without-quantity": {"listInventory response-body-schema $[*].quantity"},
		"integers-as-decimals":         {"listInventory integer-fraction-or-exponent $[*].quantity", "updateInventory integer-fraction-or-exponent $.quantity"},
		"auth-ignored":                 {"listInventory response-auth-not-enforced status", "updateInventory response-auth-not-enforced status"},
		"empty-credential-accepted":    {"listInventory response-auth-not-enforced status"},
		"scheme-ignored":               {"listInventory response-auth-not-enforced status"},
		"query-key-accepted":           {"listInventory response-auth-not-enforced status"},
		"not-found-before-auth":        {"updateInventory response-auth-not-enforced status"},
		"validation-before-auth":       {"updateInventory response-auth-not-enforced status"},
		"error-status-field-wrong":     {"listInventory error-status-mismatch $.status", "updateInventory error-status-mismatch $.status", "GET /pets/{petId} error-status-mismatch $.status"},
		"error-code-empty":             {"listInventory error-field-empty $.code", "updateInventory error-field-empty $.code", "GET /pets/{petId} error-field-empty $.code"},
		"content-type-text-plain":      {"listInventory response-content-type header.Content-Type", "updateInventory response-content-type header.Content-Type", "GET /pets/{petId} response-content-type header.Content-Type"},
		"list-item-unknown-status":     {"listInventory response-body-schema $[*].status"},
		"patch-echoes-old-quantity":    {"updateInventory response-echo-mismatch $.quantity"},
		"invalid-body-read-as-zero":    {"updateInventory response-invalid-request-accepted status"},
		"malformed-json-crashes":       {"updateInventory response-content-type header.Content-Type"},
		"pet-id-parsed-loosely":        {"updateInventory response-invalid-request-accepted status"},
		"list-wrapped":                 {"listInventory response-body-schema $"},
		// The default response documents 201 as an Error, which the item is not.
		"patch-answers-201":    {"updateInventory response-body-schema $.code", "updateInventory response-body-schema $.message", "updateInventory response-body-schema $.status"},
		"error-placeholders":   {"listInventory error-status-mismatch $.status", "updateInventory error-status-mismatch $.status", "GET /pets/{petId} error-status-mismatch $.status"},
		"malformed-json-hangs": {"updateInventory no-answer status"},
		// Not the breakage they are named for, which only a later read
		// shows, but one more of theirs: the stand-in answer to a valid
		// quantity skips the Content-Type check, so text/plain is stored.
		"patch-not-persisted": {"updateInventory response-invalid-request-accepted status"},
		"first-change-sticks": {"updateInventory response-invalid-request-accepted status"},
	}
	proxyBlind = map[string]string{
		"any-bearer-token-accepted":         "the proxy does not know which keys are valid",
		"bearer-case-sensitive":             "the proxy does not know which keys are valid",
		"list-duplicate-pet":                "unique petIds are not in the schema",
		"list-huge-pet-id":                  "2^53+1 is a valid int64 (the suite warns only)",
		"status-flips-on-every-other-patch": "only a second update shows it",
		"patch-touches-neighbour":           "only a read of another pet shows it",
		"unknown-pet-upserted":              "200 is documented, and the proxy does not know which pets exist",
		"rejects-but-writes":                "only a later read shows it",
		"no-body-size-limit":                "the contract gives no size limit",
		"lost-updates":                      "only concurrent writers show it",
		"shapeless-operations-500":          "the contract documents a default response for these operations",
		"no-www-authenticate":               "the contract does not document the header",
		"no-deprecation-header":             "the contract does not document the header",
		"shapeless-operations-empty-200":    "allowed: the document gives no body for these answers",
		"int64-overflow-accepted":           "allowed: the contract gives no bound on quantity",
		"malformed-id-404":                  "allowed: a path segment that is no identifier addresses no pet, so 404 is as right as 400",
		"list-random-record":                "each list is valid on its own: only two lists with no write between them show it",
		// The operations' default response documents any other error with
		// an Error body: one answer cannot show that another status was due.
		"bad-input-gets-422":        "a 422 with an Error body is documented by the default response; the suite wants the 400",
		"text-plain-crashes":        "its 500 has an Error body, documented by the default response",
		"silent-cases-crash":        "its 500 has an Error body, documented by the default response",
		"huge-body-crashes":         "its 500 has an Error body, documented by the default response",
		"rate-limited-now-and-then": "a 429 with an Error body is documented by the default response",
	}
)

// A probe is one request the test sends through the proxy.
type probe struct{ method, path, auth, contentType, body string }

// probes exercise every rule a proxy can see broken: with and without a
// credential, valid and invalid input, a body past 1 MiB, each operation.
// The 25 lists at the end reach the 25th request, which
// rate-limited-now-and-then limits.
func probes() []probe {
	key := "Bearer " + testKey
	ps := []probe{
		{"GET", "/v1/inventory", key, "", ""},
		{"GET", "/v1/inventory", "", "", ""},
		{"GET", "/v1/inventory", "Bearer", "", ""},
		{"GET", "/v1/inventory", "Basic " + testKey, "", ""},
		{"GET", "/v1/inventory?api_key=" + testKey, "", "", ""},
		{"PATCH", "/v1/inventory/3", key, "", `{"quantity":7}`},
		{"PATCH", "/v1/inventory/999999", "", "", `{"quantity":1}`},
		{"PATCH", "/v1/inventory/3", "", "", `{"quantity":`},
		{"PATCH", "/v1/inventory/3", key, "", `{"quantity":`},
		{"PATCH", "/v1/inventory/3", key, "", `{}`},
		{"PATCH", "/v1/inventory/3", key, "text/plain", `{"quantity":2}`},
		{"PATCH", "/v1/inventory/3", key, "", `{"quantity":-1}`},
		{"PATCH", "/v1/inventory/abc", key, "", `{"quantity":1}`},
		{"GET", "/v1/pets/1", key, "", ""},
		{"PATCH", "/v1/inventory/3", key, "", `{"quantity":1,"pad":"` + strings.Repeat("x", 1<<20) + `"}`},
	}
	for range 25 {
		ps = append(ps, probe{"GET", "/v1/inventory", key, "", ""})
	}
	return ps
}

// TestProxyFindsBreakages runs the proxy in front of the correct mock and
// of each broken server, sends the probes, and checks the violations of
// the backend's answers: none from the mock, the expected ones from each
// broken server. The proxy also records a HAR file, and checking that file
// must give the same findings.
func TestProxyFindsBreakages(t *testing.T) {
	c, err := spec.Shared()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{correctServer}
	for _, b := range brokenServers {
		names = append(names, b.name)
		_, found := proxyFinds[b.name]
		_, blind := proxyBlind[b.name]
		if found == blind {
			t.Errorf("%s: in proxyFinds %v, in proxyBlind %v; want it in exactly one", b.name, found, blind)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var h http.Handler = newMock(t)
			if b, ok := brokenServerNamed(name); ok {
				h = b.wrap(h)
			}
			backend := httptest.NewServer(h)
			defer backend.Close()
			var har bytes.Buffer
			hw, err := exchange.NewHARWriter(&har, "test", "1", conformance.KeyRedactor(testKey))
			if err != nil {
				t.Fatal(err)
			}
			// A short timeout: malformed-json-hangs holds its answer 3s. A
			// small check limit: the 1 MiB body need not be kept whole.
			p, err := proxy.New(proxy.Config{Contract: c, Upstream: backend.URL + "/v1", HAR: hw, APIKeys: []string{testKey},
				Timeout: 1500 * time.Millisecond, BodyLimit: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			front := httptest.NewServer(p)
			defer front.Close()
			for _, pr := range probes() {
				send(t, front.URL, pr)
			}
			front.Close() // waits for the proxy to have checked every exchange
			if err := hw.Close(); err != nil {
				t.Fatal(err)
			}
			live := p.Findings().List()
			if got, want := responseRules(live), proxyFinds[name]; !sameSet(got, want) {
				t.Errorf("violations of the answers:\n  %q\nwant\n  %q", got, want)
			}
			if bytes.Contains(har.Bytes(), []byte(testKey)) {
				t.Error("the HAR holds the API key")
			}
			// The same findings from the recording.
			fromHAR := spec.NewFindings(c, spec.FindingsOptions{})
			judge := spec.NewJudge(c, nil)
			m := exchange.HARMapping{BasePath: c.BasePath}
			if err := exchange.ReadHAR(&har, func(e *exchange.HAREntry) error {
				if x, _ := m.Exchange(e); x != nil {
					rv, vs := judge.Exchange(x)
					fromHAR.Record(x, rv.Name, vs)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// The recording keeps what arrived, answers cut short and missing
			// ones included: the same findings, as many.
			if got, want := groups(fromHAR.List()), groups(live); !slices.Equal(got, want) {
				t.Errorf("from the HAR:\n  %q\nlive:\n  %q", got, want)
			}
		})
	}
}

// send makes one probe request and reads the answer.
func send(t *testing.T, base string, pr probe) {
	t.Helper()
	var body *strings.Reader
	if pr.body != "" {
		body = strings.NewReader(pr.body)
	}
	var req *http.Request
	var err error
	if body != nil {
		req, err = http.NewRequest(pr.method, base+pr.path, body)
	} else {
		req, err = http.NewRequest(pr.method, base+pr.path, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	if pr.auth != "" {
		req.Header.Set("Authorization", pr.auth)
	}
	if pr.body != "" {
		ct := pr.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", pr.method, pr.path, err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
}

// responseRules lists the distinct "operation rule path" of the findings
// about the backend's answers.
func responseRules(fs []spec.Finding) []string {
	var out []string
	for _, f := range fs {
		if s := f.Operation + " " + f.Rule + " " + f.Path; f.Where == spec.WhereResponse && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// groups lists every group with its count, sorted.
func groups(fs []spec.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Operation+" "+f.Rule+" "+f.Where+" "+f.Path+" "+strings.Repeat("|", int(min(f.Count, 50))))
	}
	slices.Sort(out)
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
