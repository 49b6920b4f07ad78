package proxy

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/petstore/inventory-kit/mockserver/metrics"
)

// TestMetrics: the proxy counts exchanges by operation and the backend's
// status, and violations by operation and rule, so a team can alert on
// drift; /metrics takes the admin key, and shows no path or key.
func TestMetrics(t *testing.T) {
	// A backend that drifted: its list has a status the contract does not
	// allow, and it answers unknown paths 404.
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/v1/inventory" {
			w.WriteHeader(404)
			w.Write([]byte(`{"code":"not_found","message":"no","status":404}`))
			return
		}
		w.Write([]byte(`[{"petId":1,"quantity":2,"status":"lost"}]`))
	}))
	defer backend.Close()
	m := metrics.New()
	addr, _ := startProxy(t, backend.URL+"/v1", Config{Metrics: m, AdminKey: "px-admin-key"})
	for range 3 {
		do(t, "GET", addr+"/v1/inventory", "")
	}
	do(t, "GET", addr+"/v1/secret-path-"+testKey, "")

	var families map[string]*dto.MetricFamily
	var text string
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := do(t, "GET", addr+"/metrics", "", "Authorization", "Bearer px-admin-key")
		if resp.StatusCode != 200 {
			t.Fatalf("GET /metrics: %d %s", resp.StatusCode, body)
		}
		text = string(body)
		p := expfmt.NewTextParser(model.LegacyValidation)
		var err error
		if families, err = p.TextToMetricFamilies(strings.NewReader(text)); err != nil {
			t.Fatal(err)
		}
		if sum(families["inventory_mock_proxy_exchanges_total"]) >= 4 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, tt := range []struct {
		family string
		labels string
		want   float64
	}{
		{"inventory_mock_proxy_exchanges_total", `operation=listInventory,status=200`, 3},
		{"inventory_mock_proxy_exchanges_total", `operation=none,status=404`, 1},
		{"inventory_mock_proxy_violations_total", `operation=listInventory,rule=response-body-schema`, 3},
		{"inventory_mock_proxy_exchange_duration_seconds", `operation=listInventory`, 3},
	} {
		if got := series(families[tt.family], tt.labels); got != tt.want {
			t.Errorf("%s{%s} = %v; want %v\n%s", tt.family, tt.labels, got, tt.want, text)
		}
	}
	for _, secret := range []string{testKey, "px-admin-key", "secret-path"} {
		if strings.Contains(text, secret) {
			t.Errorf("/metrics shows %q", secret)
		}
	}
	if resp, _ := do(t, "GET", addr+"/metrics", ""); resp.StatusCode != 401 {
		t.Errorf("GET /metrics with an API key: %d; want 401", resp.StatusCode)
	}
}

// sum adds up a counter family's series.
func sum(f *dto.MetricFamily) float64 {
	var n float64
	if f != nil {
		for _, m := range f.Metric {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// series returns the count of the series with the labels name=value,...
// in order; -1 if there is none.
func series(f *dto.MetricFamily, labels string) float64 {
	if f == nil {
		return -1
	}
	for _, m := range f.Metric {
		var parts []string
		for _, l := range m.Label {
			parts = append(parts, l.GetName()+"="+l.GetValue())
		}
		if strings.Join(parts, ",") != labels {
			continue
		}
		if m.Histogram != nil {
			return float64(m.Histogram.GetSampleCount())
		}
		return m.GetCounter().GetValue()
	}
	return -1
}
