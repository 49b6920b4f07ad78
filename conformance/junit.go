package conformance

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2/types"
)

// The JUnit document, in the shape GitHub's, GitLab's and Jenkins' test
// views read: one testsuite per area, classname "conformance.<area>",
// names without Ginkgo's prefixes, warnings and the summary as properties
// and system-out.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Skipped  int          `xml:"skipped,attr"`
		Time     float64      `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       float64         `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property,omitempty"`
		Cases      []junitCase     `xml:"testcase"`
		SystemOut  string          `xml:"system-out,omitempty"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      float64       `xml:"time,attr"`
		Skipped   *junitMessage `xml:"skipped,omitempty"`
		Failure   *junitMessage `xml:"failure,omitempty"`
		Error     *junitMessage `xml:"error,omitempty"`
		SystemOut string        `xml:"system-out,omitempty"`
	}
	junitMessage struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// RunInfo is what the reports say about the run beside its checks.
type RunInfo struct {
	Target    string // the base URL, redacted
	Contract  string // where the contract came from
	Seed      uint64 // the exploration seed; 0 where it did not run
	Mutations bool
	Strict    bool
	Summary   string // the summary text
}

// JUnitReport renders r as JUnit XML, the key replaced in every value
// before the document is encoded.
func JUnitReport(r types.Report, info RunInfo, rd *Redactor) []byte {
	t := TallyReport(r, info.Mutations)
	doc := junitSuites{Name: SuiteName, Time: r.RunTime.Seconds()}
	byArea := map[Area]*junitSuite{}
	for _, s := range r.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		a := AreaOf(s.Labels())
		js := byArea[a]
		if js == nil {
			js = &junitSuite{Name: string(a), Timestamp: r.StartTime.UTC().Format(time.RFC3339)}
			byArea[a] = js
		}
		c := junitCase{Name: CheckName(s), Classname: "conformance." + string(a), Time: s.RunTime.Seconds()}
		var out []string
		for _, e := range s.ReportEntries {
			switch e.Name {
			case EntryWarning, EntryObservation, EntryRestoreFailed, EntryExploration:
				out = append(out, e.Name+": "+e.StringRepresentation())
			}
		}
		c.SystemOut = strings.Join(out, "\n")
		switch {
		case s.State == types.SpecStatePassed:
		case s.State == types.SpecStateSkipped || s.State == types.SpecStatePending:
			msg := s.Failure.Message
			if msg == "" {
				msg = "not selected by --label-filter"
			}
			c.Skipped = &junitMessage{Message: msg}
			js.Skipped++
		case s.State.Is(types.SpecStateFailed):
			first, _, _ := strings.Cut(s.Failure.Message, "\n")
			c.Failure = &junitMessage{Message: first, Type: "contract", Text: s.Failure.Message}
			js.Failures++
		default: // panicked, interrupted, aborted, timed out
			c.Error = &junitMessage{Message: s.State.String() + ": " + firstLine(s.Failure.Message), Type: s.State.String(), Text: s.Failure.Message}
			js.Errors++
		}
		js.Tests++
		js.Time += c.Time
		js.Cases = append(js.Cases, c)
	}
	for _, a := range Areas {
		js := byArea[a]
		if js == nil {
			continue
		}
		slices.SortStableFunc(js.Cases, func(x, y junitCase) int { return strings.Compare(x.Name, y.Name) })
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Errors += js.Errors
		doc.Skipped += js.Skipped
		doc.Suites = append(doc.Suites, *js)
	}
	summary := junitSuite{Name: "summary", Timestamp: r.StartTime.UTC().Format(time.RFC3339), SystemOut: info.Summary}
	summary.Properties = info.properties(t)
	doc.Suites = append(doc.Suites, summary)
	return doc.encode(rd)
}

// encode renders the document as XML, the key replaced in every name,
// attribute and text first.
func (doc junitSuites) encode(rd *Redactor) []byte {
	s := rd.String
	doc.Name = s(doc.Name)
	for i := range doc.Suites {
		js := &doc.Suites[i]
		js.Name, js.SystemOut = s(js.Name), s(js.SystemOut)
		for j := range js.Properties {
			js.Properties[j].Name, js.Properties[j].Value = s(js.Properties[j].Name), s(js.Properties[j].Value)
		}
		for j := range js.Cases {
			c := &js.Cases[j]
			c.Name, c.Classname, c.SystemOut = s(c.Name), s(c.Classname), s(c.SystemOut)
			for _, m := range []*junitMessage{c.Skipped, c.Failure, c.Error} {
				if m != nil {
					m.Message, m.Type, m.Text = s(m.Message), s(m.Type), s(m.Text)
				}
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	_ = enc.Encode(doc)
	b.WriteByte('\n')
	return b.Bytes()
}

func (info RunInfo) properties(t Tally) []junitProperty {
	ps := []junitProperty{
		{"target", info.Target},
		{"contract", info.Contract},
	}
	if info.Seed != 0 { // 0: the exploration did not run
		ps = append(ps, junitProperty{"seed", fmt.Sprint(info.Seed)})
	}
	ps = append(ps, []junitProperty{
		{"mutations", fmt.Sprint(info.Mutations)},
		{"strict", fmt.Sprint(info.Strict)},
		{"passed", fmt.Sprint(t.Passed)},
		{"failed", fmt.Sprint(len(t.Failed))},
		{"skipped", fmt.Sprint(t.Skipped)},
		{"interrupted", fmt.Sprint(len(t.Interrupted))},
	}...)
	for _, w := range dedupe(t.Warnings) {
		ps = append(ps, junitProperty{"warning", w})
	}
	for _, c := range t.Causes {
		ps = append(ps, junitProperty{"cause", fmt.Sprintf("%s: %s (broke %d)", c, c.Text(), len(t.ByCause[c]))})
	}
	return ps
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// CannotRunJUnit is the JUnit report of a run that could not be made: one
// errored test saying why, so CI never shows a stale or empty report.
func CannotRunJUnit(reason string, rd *Redactor) []byte {
	doc := junitSuites{Name: SuiteName, Tests: 1, Errors: 1, Suites: []junitSuite{{
		Name: "run", Tests: 1, Errors: 1, Timestamp: time.Now().UTC().Format(time.RFC3339),
		Cases: []junitCase{{Name: "the run could be made", Classname: "conformance.run",
			Error: &junitMessage{Message: "the run could not be made: " + firstLine(reason), Type: "cannot-run", Text: reason}}},
	}}}
	return doc.encode(rd)
}

// CannotRunJSON is the JSON report of a run that could not be made.
func CannotRunJSON(reason string, rd *Redactor) []byte {
	b, _ := JSONReport(types.Report{
		SuiteDescription: SuiteName,
		SuiteSucceeded:   false,
		SpecialSuiteFailureReasons: []string{
			"the run could not be made: " + reason,
		},
		StartTime: time.Now(),
		EndTime:   time.Now(),
	}, rd)
	return b
}
