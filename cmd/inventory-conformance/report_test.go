package main

import (
	"encoding/xml"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// withoutChallenge is the mock answering 401 without WWW-Authenticate:
// what only an RFC requires, a warning.
func withoutChallenge(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(noChallenge{w}, r)
	})
}

type noChallenge struct{ http.ResponseWriter }

func (w noChallenge) WriteHeader(code int) {
	w.Header().Del("WWW-Authenticate")
	w.ResponseWriter.WriteHeader(code)
}

// junitDoc is what the tests read of a JUnit report.
type junitDoc struct {
	Suites []struct {
		Name  string `xml:"name,attr"`
		Props []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return doc
}

// TestStrictAndWarnings: a 401 without WWW-Authenticate is a warning: the
// run passes, and the warning is in the summary and in the JUnit report
// (a warning property of the summary suite and the check's system-out).
// With --strict the same run fails, exit 1, saying why.
func TestStrictAndWarnings(t *testing.T) {
	url, _ := newMock(t, withoutChallenge)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	args := []string{"--base-url", url, "--label-filter", "auth", "--explore-steps", "0", "--junit-report", junit}
	code, out := runChild(t, args...)
	if code != cli.ExitOK || !strings.Contains(out, "401 without a WWW-Authenticate header (RFC 9110 section 11.6.1)") {
		t.Fatalf("without --strict: exit %d; want 0 and the warning in the summary:\n%s", code, out)
	}
	doc := readJUnit(t, junit)
	var prop, sysout bool
	for _, s := range doc.Suites {
		for _, p := range s.Props {
			prop = prop || (s.Name == "summary" && p.Name == "warning" && strings.Contains(p.Value, "WWW-Authenticate"))
		}
		for _, c := range s.Cases {
			sysout = sysout || strings.Contains(c.SystemOut, "warning: ") && strings.Contains(c.SystemOut, "RFC 9110")
		}
	}
	if !prop || !sysout {
		t.Errorf("junit.xml: warning property %v, warning in a check's system-out %v; want both", prop, sysout)
	}
	code, out = runChild(t, append(args, "--strict")...)
	if code != cli.ExitFailed || !strings.Contains(out, "--strict makes this warning a failure") || !strings.Contains(out, "rfc-warning-strict") {
		t.Errorf("--strict: exit %d; want 1 and the warning as the failure's cause:\n%s", code, out)
	}
}

// TestFailuresGroupedByCause: a target that ignores the key breaks some
// thirty checks of every area and the exploration, each seeing another
// status or message; the summary shows them as one cause.
func TestFailuresGroupedByCause(t *testing.T) {
	url, _ := newMock(t, ignoresKey)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	code, out := runChild(t, "--base-url", url, "--allow-mutations", "--explore-steps", "100", "--seed", "5", "--junit-report", junit)
	if code != cli.ExitFailed {
		t.Fatalf("exit %d; want 1\n%s", code, out)
	}
	m := regexp.MustCompile(`(\d+) passed, (\d+) failed`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no summary line:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[2]); !strings.Contains(out, "Failures by cause (1 cause):\n  ✗ response-auth-not-enforced:") || !strings.Contains(out, "broke "+m[2]+" checks:") || n < 20 {
		t.Errorf("want every failure under the one cause response-auth-not-enforced:\n%s", out)
	}
	var causes []string
	for _, s := range readJUnit(t, junit).Suites {
		for _, p := range s.Props {
			if p.Name == "cause" {
				causes = append(causes, p.Value)
			}
		}
	}
	if len(causes) != 1 || !strings.HasPrefix(causes[0], "response-auth-not-enforced: ") {
		t.Errorf("junit.xml causes %q; want one, response-auth-not-enforced", causes)
	}
}

// TestJUnitOrderIsStable: two runs with the same seed list the same
// checks in the same order in the JUnit report.
func TestJUnitOrderIsStable(t *testing.T) {
	url, _ := newMock(t, nil)
	dir := t.TempDir()
	var orders [2]string
	for i := range orders {
		junit := filepath.Join(dir, "junit"+string(rune('a'+i))+".xml")
		if code, out := runChild(t, "--base-url", url, "--allow-mutations", "--explore-steps", "30", "--seed", "11", "--junit-report", junit); code != cli.ExitOK {
			t.Fatalf("exit %d\n%s", code, out)
		}
		var b strings.Builder
		for _, s := range readJUnit(t, junit).Suites {
			for _, c := range s.Cases {
				b.WriteString(c.Classname + " " + c.Name + "\n")
			}
		}
		orders[i] = b.String()
	}
	if orders[0] != orders[1] || strings.Count(orders[0], "\n") < 60 {
		t.Errorf("the two reports list the checks differently:\n%s\n---\n%s", orders[0], orders[1])
	}
}
