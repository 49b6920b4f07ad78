package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// TestProxyReports runs the proxy as a GitHub Actions job with the
// reports people read, in front of a correct and a broken backend: at
// shutdown it writes the Markdown (appended to the step summary too) and
// the HTML page of what the traffic broke and exercised, prints each
// broken rule once as an annotation, and with --min-coverage exits 1
// when the traffic exercised too little, naming what it did not.
func TestProxyReports(t *testing.T) {
	tests := []struct {
		name    string
		broken  bool
		noKey   bool // the fourth request is sent without a key, not with a wrong one: a request that breaks the contract
		min     string
		exit    int
		verdict string
		errors  []string // annotation titles
		text    []string // in the Markdown
	}{
		{"a correct backend", false, false, "10", cli.ExitOK, "passed", nil,
			[]string{"Coverage: 14.2% (2 of 14 documented responses)", "200 ×3", "401 ×1"}},
		// A request without a key is the client's doing, as a suite's
		// deliberate bad requests are: the reports say so.
		{"a correct backend, a request without a key", false, true, "10", cli.ExitOK, "failed", []string{"request-auth-missing"},
			[]string{"1 of them in requests (what clients sent)", "0 in answers"}},
		{"a correct backend, too little traffic", false, false, "50", cli.ExitFailed, "coverage below the minimum", []string{"coverage below --min-coverage"},
			[]string{"below the minimum, 50%"}},
		{"a broken backend", true, false, "0", cli.ExitOK, "failed", []string{"response-body-schema"},
			[]string{"Coverage: 7.1% (1 of 14 documented responses)", "200 ×4", "\"lost\" is not one of"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			md, page, summary := filepath.Join(dir, "r", "proxy.md"), filepath.Join(dir, "r", "proxy.html"), filepath.Join(dir, "summary.md")
			var stdout, logs syncBuffer
			addr, stop := startOut(t, []string{"--proxy-to", newBackend(t, tt.broken), "--api-key", backendKey, "--admin-key", "adm-key-2",
				"--markdown-report", md, "--html-report", page, "--min-coverage", tt.min},
				env(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": summary}), &stdout, &logs)
			for range 3 {
				if got, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", backendKey); got != 200 {
					t.Fatalf("through the proxy: %d %s", got, body)
				}
			}
			key := "not-the-backends-key" // 401 from a correct backend
			if tt.noKey {
				key = ""
			}
			get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", key)
			err := stop()
			if code := cli.Code(err); code != tt.exit {
				t.Fatalf("exit %d (%v); want %d", code, err, tt.exit)
			}
			if tt.exit == cli.ExitFailed && !strings.Contains(err.Error(), "updateInventory 200: no traffic to this operation") {
				t.Errorf("the gate does not name what the traffic did not exercise: %v", err)
			}
			m := reporttest.ReadMarkdown(t, readReport(t, md), backendKey, "adm-key-2")
			if !strings.HasSuffix(m.Headings[0], ": "+tt.verdict) {
				t.Errorf("the Markdown's heading %q; want the verdict %q", m.Headings[0], tt.verdict)
			}
			for _, want := range append(tt.text, "4 exchanges", "listInventory", "no traffic to this operation") {
				if !strings.Contains(m.Text, want) {
					t.Errorf("the Markdown lacks %q:\n%s", want, readReport(t, md))
				}
			}
			h := reporttest.ReadHTML(t, readReport(t, page), backendKey, "adm-key-2")
			if tt.broken && (!strings.Contains(strings.Join(h.Pre, "\n"), "curl -sS -i ") || !strings.Contains(h.Text, `"lost" is not one of`)) {
				t.Errorf("the HTML shows no example of the violation")
			}
			if s := readReport(t, summary); string(s) != string(readReport(t, md))+"\n" {
				t.Errorf("the step summary is not the Markdown report:\n%s", s)
			}
			var titles []string
			for _, a := range reporttest.ReadAnnotations(t, []byte(stdout.String()), backendKey, "adm-key-2") {
				titles = append(titles, a.Title)
			}
			if strings.Join(titles, ",") != strings.Join(tt.errors, ",") {
				t.Errorf("annotations %q; want %q", titles, tt.errors)
			}
			if !strings.Contains(logs.String(), "coverage=") {
				t.Errorf("the log's tally has no coverage:\n%s", logs.String())
			}
		})
	}
}

func readReport(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestProxyReportFlags: the report flags are the proxy's, and
// --min-coverage takes a percentage, from the command line or the
// environment.
func TestProxyReportFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want string // in the error; "" for none
	}{
		{[]string{"--markdown-report", "r.md"}, nil, "need --proxy-to"},
		{[]string{"--html-report", "r.html"}, nil, "need --proxy-to"},
		{[]string{"--min-coverage", "50"}, nil, "need --proxy-to"},
		{[]string{"--proxy-to", "http://x/v1", "--min-coverage", "101"}, nil, "from 0 to 100"},
		{[]string{"--proxy-to", "http://x/v1", "--min-coverage", "62.5%"}, nil, ""},
		{[]string{"--proxy-to", "http://x/v1"}, map[string]string{"INVENTORY_MOCK_MIN_COVERAGE": "abc"}, "INVENTORY_MOCK_MIN_COVERAGE"},
	} {
		o, err := parse(tt.args, env(tt.env))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("parse(%q) = %v; want no error", tt.args, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("parse(%q, %v) = %v; want an error with %q", tt.args, tt.env, err, tt.want)
		case tt.want == "" && o.Proxy.MinCoverage != 62.5:
			t.Errorf("--min-coverage 62.5%% read as %v", o.Proxy.MinCoverage)
		}
	}
}

// TestProxyCurlReplays runs the proxy as users do, without the backend's
// key (the backend checks keys, not the proxy), in front of a backend that
// breaks the contract: the report's curl line reads the key from
// $INVENTORY_API_KEY, as the journal's do, so that it replays, and never
// holds the key itself.
func TestProxyCurlReplays(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "proxy.md")
	var logs syncBuffer
	addr, stop := start(t, []string{"--proxy-to", newBackend(t, true), "--markdown-report", md}, env(nil), &logs)
	if got, body := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", backendKey); got != 200 {
		t.Fatalf("through the proxy: %d %s", got, body)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	reporttest.ReadMarkdown(t, readReport(t, md), backendKey) // fails on the key
	const want = `-H "Authorization: Bearer $INVENTORY_API_KEY"`
	if !strings.Contains(string(readReport(t, md)), want) {
		t.Errorf("the Markdown's curl line lacks %s:\n%s", want, readReport(t, md))
	}
}

// TestProxyCountsInWords checks the counts the proxy and the mock print
// read right for one as for many: no "1 violations", "1 groups" or
// "1 pets".
func TestProxyCountsInWords(t *testing.T) {
	oneOff := regexp.MustCompile(`\b1 [a-z ]*?(violations|groups|pets|records)\b`)
	t.Run("--fail-on-violation after one violation", func(t *testing.T) {
		var logs syncBuffer
		addr, stop := start(t, []string{"--proxy-to", newBackend(t, true), "--fail-on-violation"}, env(nil), &logs)
		get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", backendKey)
		err := stop()
		if cli.Code(err) != cli.ExitFailed {
			t.Fatalf("exit %d (%v); want %d", cli.Code(err), err, cli.ExitFailed)
		}
		if m := oneOff.FindString(err.Error()); m != "" || !strings.Contains(err.Error(), "1 violation is in the answers") {
			t.Errorf("the refusal reads %q; want \"1 violation is in the answers\" and no %q", err, m)
		}
	})
	t.Run("--generate 1", func(t *testing.T) {
		var logs syncBuffer
		_, stop := start(t, []string{"--generate", "1"}, env(nil), &logs)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if m := oneOff.FindString(logs.String()); m != "" || !strings.Contains(logs.String(), "--generate 1") {
			t.Errorf("the log says %q of one generated pet; want the flags (--generate 1):\n%s", m, logs.String())
		}
	})
}
