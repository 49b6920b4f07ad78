package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// TestExplorationSaysHowMuch: against a target whose list is slow the
// exploration makes a handful of steps; the run still passes (nothing is
// broken), but the console, the Markdown and HTML reports and a GitHub
// ::warning say how many steps it made, how fast the target answered
// (p50, p95, max) and that it explored too little, with what to do. A
// fast target gets the figures and no such warning.
func TestExplorationSaysHowMuch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delay  time.Duration // added to every list
		thin   bool          // the run must say it explored too little
		minP50 time.Duration
	}{
		{name: "a list that takes 1s", delay: time.Second, thin: true, minP50: time.Second},
		{name: "a local target", delay: 0, thin: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := newMock(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/inventory") {
						time.Sleep(tc.delay)
					}
					h.ServeHTTP(w, r)
				})
			})
			r := runHuman(t, nil, "--base-url", url, "--label-filter", "explore", "--explore-time", "2s")
			if r.code != cli.ExitOK {
				t.Fatalf("exit %d; want 0 (nothing is broken)\n%s", r.code, r.out)
			}
			m := regexp.MustCompile(`(\d+) steps in \d+ sequences .*answers in (\S+) \(p50\), (\S+) \(p95\), (\S+) \(max\)`).FindStringSubmatch(r.out)
			if m == nil {
				t.Fatalf("the summary gives no step count and latency percentiles:\n%s", r.out)
			}
			t.Logf("%s", m[0])
			if p50, err := time.ParseDuration(m[2]); err != nil || p50 < tc.minP50 {
				t.Errorf("p50 = %s; want at least %s", m[2], tc.minP50)
			}
			for name, text := range map[string]string{"console": r.out, "Markdown": r.md.Text + strings.Join(r.md.Headings, "\n"), "HTML": r.page.Text} {
				thin := strings.Contains(text, "explored too little") || strings.Contains(text, "Explored too little")
				switch {
				case tc.thin && !thin:
					t.Errorf("the %s does not say the exploration explored too little:\n%s", name, text)
				case !tc.thin && thin:
					t.Errorf("the %s says a %s-step exploration explored too little", name, m[1])
				case tc.thin && !strings.Contains(text, "--explore-time"):
					t.Errorf("the %s does not say what to do (--explore-time)", name)
				}
			}
			if got := len(r.annotated("warning")) > 0 && strings.Contains(strings.Join(r.annotated("warning"), "\n"), "explored too little"); got != tc.thin {
				t.Errorf("a ::warning saying it explored too little: %v; want %v (warnings %q)", got, tc.thin, r.annotated("warning"))
			}
		})
	}
}
