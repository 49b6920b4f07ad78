package mockserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// A failing store fails its lists while fail is set, as an engine that
// lost its server does.
type failing struct {
	store.Store
	fail atomic.Bool
}

func (f *failing) List(ctx context.Context, session string) (store.List, error) {
	if f.fail.Load() {
		return store.List{}, fmt.Errorf("%w: connection refused", store.ErrUnavailable)
	}
	return f.Store.List(ctx, session)
}

// scrape asks the mock for /metrics with the admin key and parses the
// answer with the client library's own parser.
func scrape(t *testing.T, url string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	r, _ := http.NewRequest("GET", url+"/metrics", nil)
	r.Header.Set("Authorization", "Bearer "+adminKeyForMetrics)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var text strings.Builder
	families, err := func() (map[string]*dto.MetricFamily, error) {
		p := expfmt.NewTextParser(model.LegacyValidation)
		return p.TextToMetricFamilies(teeReader{resp.Body, &text})
	}()
	if resp.StatusCode != 200 || err != nil {
		t.Fatalf("GET /metrics: %d %v\n%s", resp.StatusCode, err, text.String())
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q; want the text exposition format", ct)
	}
	return families, text.String()
}

const adminKeyForMetrics = "metrics-admin-key-5f1e"

// teeReader copies what is read to w.
type teeReader struct {
	r interface{ Read([]byte) (int, error) }
	w *strings.Builder
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	t.w.Write(p[:n])
	return n, err
}

// value returns the value of the family's series with exactly labels;
// -1 if there is none.
func value(f *dto.MetricFamily, labels map[string]string) float64 {
	if f == nil {
		return -1
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		if fmt.Sprint(got) != fmt.Sprint(labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// TestMetrics sends requests of every kind the metrics tell apart, then
// reads /metrics as a scraper would: names, labels and counts, and no key,
// session name or path a client sent among the labels.
func TestMetrics(t *testing.T) {
	m := metrics.New()
	st := &failing{Store: store.NewMemory(testRecords(t), store.Options{})}
	s := newServer(t, func(c *Config) {
		c.Metrics, c.Store, c.AdminKey = m, st, adminKeyForMetrics
		c.RateLimit = RateLimit{Rate: "1/m", Burst: 100}
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	do := func(method, path, body string, header http.Header) int {
		t.Helper()
		var r *http.Request
		r, _ = http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+testKey)
		if body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		for k, v := range header {
			r.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			return 0 // a reset, on purpose
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	session := http.Header{SessionHeader: {"team-secret-name"}}
	do("GET", "/v1/inventory", "", nil)
	do("GET", "/v1/inventory", "", nil)
	do("GET", "/v1/inventory", "", session)
	do("PATCH", "/v1/inventory/1", `{"quantity":"many"}`, nil)
	do("GET", "/v1/no-such-path-"+testKey, "", nil)
	do("GET", "/v1/inventory", "", http.Header{"Prefer": {"code=401"}})
	do("GET", "/v1/inventory", "", http.Header{"Prefer": {"delay=1"}})
	if r := serve(t, s, req{method: "PUT", path: "/__admin/chaos", auth: "Bearer " + adminKeyForMetrics, body: `{"rules":[{"operation":"updateInventory","fault":"reset"}]}`}); r.status != 200 {
		t.Fatalf("chaos: %d %s", r.status, r.body)
	}
	if got := do("PATCH", "/v1/inventory/1", `{"quantity":1}`, nil); got != 0 {
		t.Errorf("under a reset fault: %d; want the connection reset", got)
	}
	st.fail.Store(true)
	if got := do("GET", "/v1/inventory", "", session); got != 503 {
		t.Errorf("store down: %d; want 503", got)
	}
	st.fail.Store(false)
	if r := serve(t, s, req{method: "PUT", path: "/__admin/rate-limit", auth: "Bearer " + adminKeyForMetrics, body: `{"rate":"1/m"}`}); r.status != 200 {
		t.Fatalf("rate limit: %d %s", r.status, r.body)
	}
	do("GET", "/v1/inventory", "", nil)
	if got := do("GET", "/v1/inventory", "", nil); got != 429 {
		t.Errorf("past the rate limit: %d; want 429", got)
	}

	families, text := scrape(t, srv.URL)
	requests := families["inventory_mock_requests_total"]
	for _, tt := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"operation": "listInventory", "status": "200", "session": "default"}, 4},
		{map[string]string{"operation": "listInventory", "status": "200", "session": "named"}, 1},
		{map[string]string{"operation": "listInventory", "status": "503", "session": "named"}, 1},
		{map[string]string{"operation": "listInventory", "status": "401", "session": "default"}, 1},
		{map[string]string{"operation": "listInventory", "status": "429", "session": "default"}, 1},
		{map[string]string{"operation": "updateInventory", "status": "400", "session": "default"}, 1},
		{map[string]string{"operation": "updateInventory", "status": "0", "session": "default"}, 1},
		{map[string]string{"operation": "none", "status": "404", "session": "default"}, 1},
	} {
		if got := value(requests, tt.labels); got != tt.want {
			t.Errorf("inventory_mock_requests_total%v = %v; want %v", tt.labels, got, tt.want)
		}
	}
	for _, tt := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"inventory_mock_request_duration_seconds", map[string]string{"operation": "updateInventory"}, 2},
		{"inventory_mock_forced_answers_total", map[string]string{"operation": "listInventory"}, 1},
		{"inventory_mock_faults_total", map[string]string{"operation": "listInventory", "fault": "latency"}, 1},
		{"inventory_mock_faults_total", map[string]string{"operation": "updateInventory", "fault": "reset"}, 1},
		{"inventory_mock_store_errors_total", map[string]string{"method": "list"}, 1},
	} {
		if got := value(families[tt.family], tt.labels); got != tt.want {
			t.Errorf("%s%v = %v; want %v", tt.family, tt.labels, got, tt.want)
		}
	}
	// Every label value comes from a bounded set.
	allowed := map[string]func(string) bool{
		"operation": func(v string) bool {
			return v == "none" || s.Contract().Operation(v) != nil || strings.Contains(v, " /")
		},
		"status":  func(v string) bool { return len(v) <= 3 && strings.Trim(v, "0123456789") == "" },
		"session": func(v string) bool { return v == "default" || v == "named" },
		"fault":   func(v string) bool { return v == "latency" || slices.Contains(faults, v) },
		"method": func(v string) bool {
			return slices.Contains([]string{"list", "get", "update", "reset", "sessions", "drop", "health"}, v)
		},
		"result": func(v string) bool { return v == "loaded" || v == "refused" },
		"rule":   func(v string) bool { return v != "" },
	}
	for name, f := range families {
		if !strings.HasPrefix(name, metrics.Namespace+"_") {
			continue
		}
		for _, m := range f.Metric {
			for _, l := range m.Label {
				ok, known := allowed[l.GetName()]
				if !known || !ok(l.GetValue()) {
					t.Errorf("%s: label %s=%q is not from a bounded set", name, l.GetName(), l.GetValue())
				}
			}
		}
	}
	for _, secret := range []string{testKey, adminKeyForMetrics, "team-secret-name", "no-such-path"} {
		if strings.Contains(text, secret) {
			t.Errorf("/metrics shows %q", secret)
		}
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestMetricsNeedTheAdminKey: /metrics is the admin's; without metrics
// it is not there.
func TestMetricsNeedTheAdminKey(t *testing.T) {
	s := newServer(t, func(c *Config) { c.Metrics, c.AdminKey = metrics.New(), adminKeyForMetrics })
	for _, tt := range []struct {
		auth   string
		status int
		code   string
	}{
		{"-", 401, "unauthorized"},
		{"", 401, "admin_key_required"},
		{"Bearer wrong", 401, "unauthorized"},
		{"Bearer " + adminKeyForMetrics, 200, ""},
	} {
		r := serve(t, s, req{method: "GET", path: "/metrics", auth: tt.auth})
		if r.status != tt.status || tt.code != "" && r.Code != tt.code {
			t.Errorf("GET /metrics with %q: %d %v; want %d %s", tt.auth, r.status, r.Code, tt.status, tt.code)
		}
	}
	if r := serve(t, newServer(t), req{method: "GET", path: "/metrics"}); r.status != 404 {
		t.Errorf("without metrics, GET /metrics: %d; want 404", r.status)
	}
}

// TestMetricsReloads counts the edits loaded and refused.
func TestMetricsReloads(t *testing.T) {
	m := metrics.New()
	s := newServer(t, func(c *Config) { c.Metrics, c.Reloadable = m, true })
	if err := s.Reload(context.Background(), edited(t, addNote)); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(context.Background(), edited(t, requireNoDefault...)); err == nil {
		t.Fatal("a required field without a default loaded")
	}
	families, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(families, func(f *dto.MetricFamily) bool { return f.GetName() == "inventory_mock_contract_reloads_total" })
	if i < 0 {
		t.Fatal("no inventory_mock_contract_reloads_total")
	}
	for result, want := range map[string]float64{"loaded": 1, "refused": 1} {
		if got := value(families[i], map[string]string{"result": result}); got != want {
			t.Errorf("reloads{result=%s} = %v; want %v", result, got, want)
		}
	}
}
