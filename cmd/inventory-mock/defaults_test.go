package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDefaultStartIsQuiet starts the mock as the README's first command
// does: one warning, about what matters (the published key), and the
// listening line that says which pages may call it.
func TestDefaultStartIsQuiet(t *testing.T) {
	var logs syncBuffer
	addr, stop := start(t, nil, env(nil), &logs)
	if got, _ := get(t, http.DefaultClient, "http://"+addr+"/v1/inventory", "inventory-dev-key"); got != 200 {
		t.Fatalf("list = %d; want 200", got)
	}
	stop()
	warnings := regexp.MustCompile(`(?m)^.*level=WARN.*$`).FindAllString(logs.String(), -1)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "published development key") {
		t.Errorf("a default start warned %d times; want once, about the development key:\n%s", len(warnings), logs.String())
	}
	if !strings.Contains(logs.String(), `cors="API: any origin, without credentials; /__admin/: its own dashboard only"`) {
		t.Errorf("the start-up log does not say which pages may call the mock:\n%s", logs.String())
	}
}

// TestDashboardPollingIsNotLogged reads the admin API as the dashboard
// polls it: no access line at info level, while a change and an error
// still get theirs.
func TestDashboardPollingIsNotLogged(t *testing.T) {
	var logs syncBuffer
	addr, stop := start(t, nil, env(nil), &logs)
	base := "http://" + addr
	for range 3 {
		if got, _ := get(t, http.DefaultClient, base+"/__admin/requests?limit=100", "inventory-dev-key"); got != 200 {
			t.Fatalf("journal = %d", got)
		}
	}
	get(t, http.DefaultClient, base+"/__admin/requests", "wrong-key")
	req, _ := http.NewRequest("DELETE", base+"/__admin/chaos", nil)
	req.Header.Set("Authorization", "Bearer inventory-dev-key")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE chaos: %v %v", resp, err)
	}
	get(t, http.DefaultClient, base+"/v1/inventory", "inventory-dev-key")
	stop() // the access lines are written in batches: all of them by now
	lines := logs.String()
	for _, tt := range []struct {
		line string
		n    int
	}{
		{"method=GET path=/__admin/requests status=200", 0},
		{"method=GET path=/__admin/requests status=401", 1},
		{"method=DELETE path=/__admin/chaos status=204", 1},
		{"method=GET path=/v1/inventory status=200", 1},
	} {
		if got := strings.Count(lines, tt.line); got != tt.n {
			t.Errorf("the log has %d lines with %q; want %d:\n%s", got, tt.line, tt.n, lines)
		}
	}
}

// TestHelpGroupsFlags checks that --help lists the flags under headings:
// each flag once, the proxy's under the proxy's heading, TLS under HTTPS.
func TestHelpGroupsFlags(t *testing.T) {
	var out bytes.Buffer
	usage(&out)
	help := out.String()
	heading := func(flagName string) string {
		i := strings.Index(help, "\n  --"+flagName+" ")
		if i < 0 {
			i = strings.Index(help, "\n  --"+flagName+"\n")
		}
		if i < 0 {
			return ""
		}
		before := help[:i]
		j := strings.LastIndex(before, "\n\n")
		h, _, _ := strings.Cut(before[j+2:], "\n")
		return strings.TrimSuffix(h, ":")
	}
	for _, tt := range []struct{ flag, heading string }{
		{"addr", "Serving, the mock and the proxy"},
		{"allowed-host", "Serving, the mock and the proxy"},
		{"tls-self-signed", "HTTPS, the mock and the proxy"},
		{"tls-cert-out", "HTTPS, the mock and the proxy"},
		{"generate", "The mock"},
		{"admin-origin", "The mock"},
		{"cors-origin", "The mock"},
		{"proxy-to", "The validating proxy (--proxy-to URL)"},
		{"enforce", "The validating proxy (--proxy-to URL)"},
		{"version", "Actions: they do their job and exit, and take no environment variable"},
	} {
		if got := heading(tt.flag); got != tt.heading {
			t.Errorf("--%s is under %q; want %q", tt.flag, got, tt.heading)
		}
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^  --([a-z-]+)`).FindAllStringSubmatch(help, -1) {
		names = append(names, m[1])
	}
	n := len(newParser(&options{}).Names())
	if len(names) != n+1 || len(slices.Compact(slices.Sorted(slices.Values(names)))) != n+1 {
		t.Errorf("--help lists %d flags; want each of the %d flags and --help once", len(names), n)
	}
}

// TestAdminHosts checks the host names /__admin/ answers for, from the
// flags and the address the mock listens on.
func TestAdminHosts(t *testing.T) {
	hostname, _ := os.Hostname()
	hostname = strings.ToLower(hostname)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--addr", "127.0.0.1:8080", "--allowed-host", "inventory-mock", "--allowed-host", "Mock.Test"}, []string{"inventory-mock", "mock.test"}},
		{[]string{"--addr", "0.0.0.0:8080"}, []string{hostname}},
		{[]string{"--addr", ":8080"}, []string{hostname}},
		{[]string{"--addr", "[::]:8080", "--allowed-host", "mock"}, []string{"mock", hostname}},
		{[]string{"--addr", "mock.internal:8080"}, []string{"mock.internal"}},
	} {
		o, err := parse(tt.args, env(nil))
		if err != nil {
			t.Fatal(err)
		}
		if got := adminHosts(o); !slices.Equal(got, tt.want) {
			t.Errorf("%q: hosts %q; want %q", tt.args, got, tt.want)
		}
	}
}

// TestPprofHidesSecrets checks /debug/pprof/cmdline: the keys and the
// passwords in URLs given on the command line are hidden.
func TestPprofHidesSecrets(t *testing.T) {
	args := []string{"inventory-mock", "--api-key", "k-secret-1", "--api-key=k-secret-2", "-admin-key", "adm-secret",
		"--store", "redis://pw-secret@cache:6379/0", "--store=redis://:pw-secret@cache:6379/0?client_name=pw-secret",
		"--proxy-to", "https://user:pw-secret@backend/v1", "--upstream-api-key", "up-secret",
		"--fixtures-from=https://staging/v1?token=t-secret", "--fixtures-from", "https://staging/v1",
		"--addr", "127.0.0.1:0", "--", "--api-key", "kept"}
	got := strings.Join(hiddenArgs(args), " ")
	want := "inventory-mock --api-key xxxxx --api-key=xxxxx -admin-key xxxxx --store redis://xxxxx@cache:6379/0 " +
		"--store=redis://:xxxxx@cache:6379/0?client_name=xxxxx --proxy-to xxxxx --upstream-api-key xxxxx " +
		"--fixtures-from=xxxxx --fixtures-from https://staging/v1 --addr 127.0.0.1:0 -- --api-key kept"
	if got != want {
		t.Errorf("hiddenArgs = %s\nwant          %s", got, want)
	}
	rec := httptest.NewRecorder()
	cmdline(args)(rec, httptest.NewRequest("GET", "/debug/pprof/cmdline", nil))
	if strings.Contains(rec.Body.String(), "secret") || !strings.Contains(rec.Body.String(), "--addr\x00127.0.0.1:0") {
		t.Errorf("/debug/pprof/cmdline = %q; want the arguments, NUL between them, no secret", rec.Body.String())
	}
	var logs syncBuffer
	start(t, []string{"--pprof", "127.0.0.1:0"}, env(nil), &logs)
	m := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+/debug/pprof/)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no profile URL in the log:\n%s", logs.String())
	}
	resp, err := http.Get(m[1] + "cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := strings.Join(hiddenArgs(os.Args), "\x00"); string(body) != want {
		t.Errorf("/debug/pprof/cmdline = %q; want %q", body, want)
	}
}
