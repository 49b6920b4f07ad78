package report

import (
	"bytes"
	"encoding/xml"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// The JUnit document, in the shape GitHub's, GitLab's and Jenkins' test
// views read: one testsuite per group, and a last one, summary, with the
// run's properties and summary where it has them.
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

// JUnit renders the run as JUnit XML, every secret rd knows hidden in
// every name, attribute and text before the document is encoded, so that
// no key can break its structure.
func (r Run) JUnit(rd *exchange.Redactor) []byte {
	s := rd.String
	stamp := r.Start.UTC().Format(time.RFC3339)
	doc := junitSuites{Name: s(r.Name), Time: r.Duration.Seconds()}
	index := map[string]int{}
	for _, c := range r.Cases {
		i, ok := index[c.Suite]
		if !ok {
			i = len(doc.Suites)
			index[c.Suite] = i
			doc.Suites = append(doc.Suites, junitSuite{Name: s(c.Suite), Timestamp: stamp})
		}
		js := &doc.Suites[i]
		jc := junitCase{Name: s(c.Name), Classname: s(c.Class), Time: c.Duration.Seconds(), SystemOut: s(c.Output)}
		m := &junitMessage{Message: s(c.Message), Type: s(c.Kind), Text: s(c.Detail)}
		switch c.State {
		case Failed:
			jc.Failure = m
			js.Failures++
		case Errored:
			jc.Error = m
			js.Errors++
		case Skipped:
			jc.Skipped = &junitMessage{Message: s(c.Message)}
			js.Skipped++
		}
		js.Tests++
		js.Time += jc.Time
		js.Cases = append(js.Cases, jc)
	}
	if len(r.LeftChanged) > 0 {
		// The run's restore is no check of the contract, but what CI must
		// show most: a case of its own, failed, with every record.
		text := s(strings.Join(r.leftChangedLines(), "\n")) + "\n"
		doc.Suites = append(doc.Suites, junitSuite{Name: "restore", Tests: 1, Failures: 1, Timestamp: stamp, Cases: []junitCase{{
			Name: "every record the run wrote to is as it was", Classname: "conformance.restore",
			Failure: &junitMessage{Message: s(r.leftChangedMessage()), Type: "restore-failed", Text: text},
		}}})
	}
	for _, js := range doc.Suites {
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Errors += js.Errors
		doc.Skipped += js.Skipped
	}
	if r.Summary != "" || len(r.Properties) > 0 {
		summary := junitSuite{Name: "summary", Timestamp: stamp, SystemOut: s(r.Summary)}
		for _, p := range r.Properties {
			summary.Properties = append(summary.Properties, junitProperty{s(p.Name), s(p.Value)})
		}
		doc.Suites = append(doc.Suites, summary)
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	_ = enc.Encode(doc)
	b.WriteByte('\n')
	return b.Bytes()
}
