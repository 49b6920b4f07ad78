package report_test

import (
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/report"
)

// rangesDoc documents an exact status, a range and default on one
// operation, and two exact statuses and no default on another.
const rangesDoc = `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: /v1}]
paths:
  /things:
    get:
      operationId: listThings
      responses:
        "200": {description: ok}
        4XX: {description: a client error}
        default: {description: anything else}
    post:
      operationId: addThing
      responses:
        "201": {description: added}
        "400": {description: bad}
`

func loadDoc(t *testing.T, doc string) *spec.Contract {
	t.Helper()
	c, err := spec.Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCoverage counts (operation, documented response) pairs: a status
// exercises the response it resolves to (exact, range, default), default
// is one pair, and an undocumented status exercises nothing.
func TestCoverage(t *testing.T) {
	c := loadDoc(t, rangesDoc)
	tests := []struct {
		name       string
		answers    map[string]map[int]int64
		exercised  int
		missing    []string // operation code
		defaultOnl int      // observations of statuses under a range or default
	}{
		{"nothing", nil, 0, []string{"listThings 200", "listThings 4XX", "listThings default", "addThing 201", "addThing 400"}, 0},
		{"every pair", map[string]map[int]int64{"listThings": {200: 3, 404: 1, 503: 2}, "addThing": {201: 1, 400: 1}}, 5, nil, 2},
		{"one range status covers the range", map[string]map[int]int64{"listThings": {401: 1, 429: 7}}, 1, []string{"listThings 200", "listThings default", "addThing 201", "addThing 400"}, 1},
		{"an undocumented status exercises nothing", map[string]map[int]int64{"addThing": {201: 1, 418: 2, 500: 1}}, 1, []string{"listThings 200", "listThings 4XX", "listThings default", "addThing 400"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cov := c.Coverage(tt.answers)
			e, d := cov.Figure()
			if e != tt.exercised || d != 5 {
				t.Errorf("Figure = %d of %d; want %d of 5", e, d, tt.exercised)
			}
			var missing []string
			for _, p := range cov.Missing() {
				missing = append(missing, p.Operation+" "+p.Code)
			}
			if strings.Join(missing, ", ") != strings.Join(tt.missing, ", ") {
				t.Errorf("Missing = %q; want %q", missing, tt.missing)
			}
			if got := len(cov.DefaultOnly()); got != tt.defaultOnl {
				t.Errorf("DefaultOnly = %q; want %d lines", cov.DefaultOnly(), tt.defaultOnl)
			}
		})
	}
	cov := c.Coverage(map[string]map[int]int64{"addThing": {201: 1, 418: 2}})
	if u := cov.Operations[1].Undocumented; len(u) != 1 || u[0] != (report.StatusCount{Status: 418, Count: 2}) {
		t.Errorf("addThing's undocumented statuses = %v; want 418 ×2", u)
	}
}

// TestCoverageGate: the minimum is compared on whole numbers, so 4 of 5
// meets 80 and misses 80.1, and 2 of 3 (shown 66.6%, rounded down) meets
// 66.66 and misses 66.67; the gate names every pair not exercised.
func TestCoverageGate(t *testing.T) {
	c := loadDoc(t, rangesDoc)
	four := c.Coverage(map[string]map[int]int64{"listThings": {200: 1, 404: 1, 500: 1}, "addThing": {201: 1}})
	tests := []struct {
		min  float64
		met  bool
		head string
	}{
		{0, true, "80% (4 of 5 documented responses)"},
		{80, true, ""},
		{80.1, false, ""},
		{100, false, ""},
	}
	for _, tt := range tests {
		four.Min = tt.min
		if four.Met() != tt.met {
			t.Errorf("4 of 5, Min %g: Met = %v; want %v", tt.min, !tt.met, tt.met)
		}
		if g := four.Gate(); (g == "") != tt.met || !tt.met && !strings.Contains(g, "addThing 400") {
			t.Errorf("Min %g: Gate = %q", tt.min, g)
		}
		if tt.head != "" && four.Headline() != tt.head {
			t.Errorf("Headline = %q; want %q", four.Headline(), tt.head)
		}
	}
	third := &report.Coverage{Operations: []report.OperationCoverage{{Name: "x", Responses: []report.ResponseCoverage{
		{Code: "200", Statuses: []report.StatusCount{{200, 1}}}, {Code: "201", Statuses: []report.StatusCount{{201, 1}}}, {Code: "404"}}}}}
	for _, tt := range []struct {
		min float64
		met bool
	}{{66.66, true}, {66.67, false}, {66.7, false}} {
		third.Min = tt.min
		if third.Met() != tt.met {
			t.Errorf("2 of 3, Min %g: Met = %v; want %v", tt.min, third.Met(), tt.met)
		}
	}
	if h := third.Headline(); h != "66.6% (2 of 3 documented responses)" {
		t.Errorf("Headline = %q; want the figure rounded down, 66.6%%", h)
	}
}

func TestParsePercent(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"80", 80, true}, {"62.5%", 62.5, true}, {"0", 0, true}, {"100%", 100, true},
		{"100.5", 0, false}, {"-1", 0, false}, {"abc", 0, false}, {"NaN", 0, false}, {"", 0, false}, {"%", 0, false},
	}
	for _, tt := range tests {
		got, err := report.ParsePercent(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
