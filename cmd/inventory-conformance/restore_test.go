package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec/report/reporttest"
)

// TestOneRestoreList runs the suite with --allow-mutations against
// backends whose writes fail or whose reads lag, and reads what each
// output says is left changed: the Markdown, the step summary, the HTML,
// the JUnit and stderr must give the same list, and it must be exactly the
// records the backend holds otherwise than before the run, each with the
// value found and the value wanted. The header names the records the run
// wrote to; restore-failed ranks below its cause; a list that lags its
// writes is a stale read, not a write that was not stored.
func TestOneRestoreList(t *testing.T) {
	p := 0.2
	// RESTORE_TEST_LAG sets the lagging list's lag (a replica's 2s, say);
	// 300ms keeps the run short.
	lag, err := time.ParseDuration(os.Getenv("RESTORE_TEST_LAG"))
	if err != nil {
		lag = 300 * time.Millisecond
	}
	chaos := mockserver.Chaos{Seed: 7, Rules: []mockserver.ChaosRule{{Operation: "updateInventory", Fault: mockserver.FaultStatus, Status: 500, Probability: &p}}}
	for _, tc := range []struct {
		name     string
		chaos    mockserver.Chaos
		wrap     func(http.Handler) http.Handler
		minLeft  int           // the fewest records the backend must be left with changed
		cause    string        // a cause the run must name; "" none
		notCause string        // a cause it must not name; "" none
		timeout  time.Duration // the run's bound
	}{
		{name: "20% of PATCHes answered 500", chaos: chaos},
		{name: "20% of PATCHes answered 500, the first write to a pet sticks", chaos: chaos, wrap: firstWriteSticks, minLeft: 1, cause: "server-error"},
		{name: "the list lags the writes", wrap: func(h http.Handler) http.Handler { return lagged(h, lag) },
			cause: "stale-read", notCause: "write-not-stored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, srv := mockserver.StartTest(t, mockserver.Config{APIKeys: []string{testKey}, Chaos: tc.chaos}, func(h http.Handler) http.Handler {
				if tc.wrap != nil {
					h = tc.wrap(h)
				}
				return h
			})
			before := records(t, listed(t, m))
			dir := t.TempDir()
			md, page, junit, summary, jsonPath := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html"), filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md"), filepath.Join(dir, "r.json")
			a, _ := json.Marshal([]string{"--base-url", srv.URL + "/v1", "--allow-mutations", "--explore-time", "2s", "--seed", "11",
				"--markdown-report", md, "--html-report", page, "--junit-report", junit, "--json-report", jsonPath})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), childArgs+"="+string(a), "INVENTORY_API_KEY="+testKey, "GITHUB_STEP_SUMMARY="+summary)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			after := records(t, listed(t, m))
			if os.Getenv("RESTORE_TEST_SHOW") != "" {
				t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			}

			// What the backend really holds otherwise than before the run.
			var want []string
			for id, was := range before {
				if now := after[id]; now != was {
					want = append(want, fmt.Sprintf("petId %d: found quantity %s; wanted quantity %s", id, now, was))
				}
			}
			slices.Sort(want)
			if len(want) < tc.minLeft {
				t.Fatalf("the backend holds %d records changed; the case needs %d at least", len(want), tc.minLeft)
			}

			mdText := readFile(t, md)
			reporttest.ReadMarkdown(t, []byte(mdText), testKey)
			reporttest.ReadHTML(t, []byte(readFile(t, page)), testKey)
			outputs := map[string][]string{
				"Markdown":     mdList(mdText),
				"step summary": mdList(readFile(t, summary)),
				"HTML":         htmlList(readFile(t, page)),
				"JUnit":        junitList(t, readFile(t, junit)),
				"JSON":         jsonList(t, readFile(t, jsonPath)),
				"stderr":       consoleList(stderr.String()),
				"stdout":       consoleList(stdout.String()),
			}
			for name, got := range outputs {
				if !slices.Equal(withoutWhy(got), want) {
					t.Errorf("%s lists as left changed:\n  %s\nthe backend holds changed:\n  %s", name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
				}
				if !slices.Equal(got, outputs["stderr"]) {
					t.Errorf("%s's list is not stderr's:\n  %s\n  vs\n  %s", name, strings.Join(got, "\n  "), strings.Join(outputs["stderr"], "\n  "))
				}
			}

			// The header names the records written, not one petId.
			mode := regexp.MustCompile(`mode: ([^·\n]*)`).FindStringSubmatch(mdText)
			if mode == nil || !strings.Contains(mode[1], "wrote to petId") {
				t.Errorf("the header's mode = %q; want the records the run wrote to", mode)
			} else if n := regexp.MustCompile(`\((\d+) records?\)`).FindStringSubmatch(mode[1]); n == nil {
				t.Errorf("the header's mode %q does not count the records written", mode[1])
			} else if c, _ := strconv.Atoi(n[1]); c < len(want) || c < 2 {
				t.Errorf("the header says %d records written; %d were left changed, and the exploration writes to records of its own", c, len(want))
			}

			causes := causeOrder(mdText)
			if tc.cause != "" && !slices.Contains(causes, tc.cause) {
				t.Errorf("causes %q; want %s among them", causes, tc.cause)
			}
			if tc.notCause != "" && slices.Contains(causes, tc.notCause) {
				t.Errorf("causes %q; want no %s", causes, tc.notCause)
			}
			if r := slices.Index(causes, "restore-failed"); r >= 0 && r < len(causes)-1 {
				t.Errorf("causes %q: restore-failed ranks above the cause of the failed restore", causes)
			}
		})
	}
}

// records reads a list's quantities by petId.
func records(t *testing.T, list []byte) map[int64]string {
	t.Helper()
	var items []struct {
		PetID    int64           `json:"petId"`
		Quantity json.RawMessage `json:"quantity"`
	}
	if err := json.Unmarshal(list, &items); err != nil {
		t.Fatal(err)
	}
	out := map[int64]string{}
	for _, it := range items {
		out[it.PetID] = string(it.Quantity)
	}
	return out
}

// withoutWhy drops the reason from each line of a list, leaving the
// record and the values found and wanted, sorted.
func withoutWhy(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i], _, _ = strings.Cut(l, " — ")
	}
	slices.Sort(out)
	return out
}

// leftChangedTitle heads the list in every output (report.LeftChangedTitle).
const leftChangedTitle = "Left changed: set these records back by hand"

var mdEscape = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)

// mdList reads the list under the Markdown's heading.
func mdList(s string) []string {
	_, rest, ok := strings.Cut(s, "#### ❗ "+mdEscaped(leftChangedTitle)+"\n\n")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(rest, "\n") {
		item, ok := strings.CutPrefix(l, "- ")
		if !ok {
			break
		}
		out = append(out, html.UnescapeString(mdEscape.ReplaceAllString(item, "$1")))
	}
	return out
}

func mdEscaped(s string) string { return strings.NewReplacer("_", `\_`).Replace(s) }

// htmlList reads the items of the HTML report's left-changed section.
func htmlList(s string) []string {
	sec := regexp.MustCompile(`(?s)<section id="left-changed".*?</section>`).FindString(s)
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<li>(.*?)</li>`).FindAllStringSubmatch(sec, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// jsonList reads the list from the Ginkgo JSON report's suite failure
// reasons.
func jsonList(t *testing.T, s string) []string {
	t.Helper()
	var doc []struct {
		SuiteSucceeded             bool
		SpecialSuiteFailureReasons []string
	}
	if err := json.Unmarshal([]byte(s), &doc); err != nil || len(doc) != 1 {
		t.Fatalf("the JSON report is not one Ginkgo report (%v):\n%s", err, s)
	}
	var out []string
	for _, r := range doc[0].SpecialSuiteFailureReasons {
		if l, ok := strings.CutPrefix(r, leftChangedTitle+": "); ok {
			out = append(out, l)
		}
	}
	if len(out) > 0 && doc[0].SuiteSucceeded {
		t.Error("the JSON report lists records left changed, yet says the suite succeeded")
	}
	return out
}

// junitList reads the failure text of the JUnit report's restore case.
func junitList(t *testing.T, s string) []string {
	t.Helper()
	var doc struct {
		Suites []struct {
			Cases []struct {
				Classname string `xml:"classname,attr"`
				Failure   *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(s), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, su := range doc.Suites {
		for _, c := range su.Cases {
			if c.Classname == "conformance.restore" && c.Failure != nil {
				out = append(out, strings.Split(strings.TrimSpace(c.Failure.Text), "\n")...)
			}
		}
	}
	return out
}

// consoleList reads the list the console prints under its title.
func consoleList(s string) []string {
	i := strings.Index(s, "!!! "+leftChangedTitle)
	if i < 0 {
		return nil
	}
	var out []string
	for _, l := range strings.Split(s[i:], "\n")[1:] {
		item, ok := strings.CutPrefix(l, "  ")
		if !ok {
			break
		}
		out = append(out, item)
	}
	return out
}

// causeOrder reads the causes of the Markdown's table, in order.
func causeOrder(md string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// firstWriteSticks stores a pet's first accepted write and answers 500 to
// every write to it after that: a restore cannot put it back.
func firstWriteSticks(h http.Handler) http.Handler {
	var mu sync.Mutex // guards written
	written := map[string]bool{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || r.Header.Get("Authorization") != "Bearer "+testKey {
			h.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if written[r.URL.Path] {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"code":"internal","message":"the store is read-only now","status":500}`)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		written[r.URL.Path] = rec.Code == http.StatusOK
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// lagged serves the list as it was lag ago, as a read replica does: a
// write is acknowledged at once and listed lag later.
func lagged(h http.Handler, lag time.Duration) http.Handler {
	type snapshot struct {
		at   time.Time
		body []byte
	}
	list := func() []byte {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/v1/inventory", nil)
		r.Header.Set("Authorization", "Bearer "+testKey)
		h.ServeHTTP(rec, r)
		return rec.Body.Bytes()
	}
	var mu sync.Mutex // guards history
	var history []snapshot
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" && r.Header.Get("Authorization") == "Bearer "+testKey {
			mu.Lock()
			if history == nil {
				history = []snapshot{{time.Time{}, list()}}
			}
			body := history[0].body
			for _, s := range history {
				if time.Since(s.at) >= lag {
					body = s.body
				}
			}
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
			return
		}
		h.ServeHTTP(w, r)
		if r.Method == http.MethodPatch {
			mu.Lock()
			history = append(history, snapshot{time.Now(), list()})
			mu.Unlock()
		}
	})
}
