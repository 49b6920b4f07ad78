package report

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// Outputs are where the reports of a run go; the same for the suite, the
// proxy and the HAR check, each file named by the flag of the same name.
type Outputs struct {
	JUnit       string    // --junit-report FILE; "" none
	Markdown    string    // --markdown-report FILE; "" none
	HTML        string    // --html-report FILE; "" none
	StepSummary string    // a file the Markdown summary is appended to ($GITHUB_STEP_SUMMARY); "" none
	Annotations io.Writer // receives the run's GitHub workflow commands; nil none
}

// GitHub fills StepSummary and Annotations from GitHub Actions'
// environment: $GITHUB_STEP_SUMMARY, and annotations to w where
// $GITHUB_ACTIONS is "true". Elsewhere it leaves them empty.
func (o *Outputs) GitHub(getenv func(string) string, w io.Writer) {
	o.StepSummary, o.Annotations = getenv("GITHUB_STEP_SUMMARY"), nil
	if getenv("GITHUB_ACTIONS") == "true" {
		o.Annotations = w
	}
}

// Files returns the outputs that are files replaced whole.
func (o Outputs) Files() Outputs { return Outputs{JUnit: o.JUnit, Markdown: o.Markdown, HTML: o.HTML} }

// Write writes every report of run: the files, the step summary (the
// Markdown, appended) and the annotations. It writes all it can, and
// returns the errors, each naming its flag or variable.
func (o Outputs) Write(run Run, rd *exchange.Redactor) error {
	var errs []error
	file := func(flag, path string, render func(*exchange.Redactor) []byte) {
		if path == "" {
			return
		}
		if err := WriteFile(path, render(rd)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", flag, err))
		}
	}
	file("--junit-report", o.JUnit, run.JUnit)
	file("--markdown-report", o.Markdown, run.Markdown)
	file("--html-report", o.HTML, run.HTML)
	if o.StepSummary != "" {
		if err := appendFile(o.StepSummary, append(run.Markdown(rd), '\n')); err != nil {
			errs = append(errs, fmt.Errorf("$GITHUB_STEP_SUMMARY: %w", err))
		}
	}
	if o.Annotations != nil {
		if _, err := o.Annotations.Write(run.Annotations(rd)); err != nil {
			errs = append(errs, fmt.Errorf("annotations: %w", err))
		}
	}
	return errors.Join(errs...)
}

// CannotRun is the Run of a run that could not be made, saying why: one
// errored case, so that no CI view shows a stale or an empty report.
func CannotRun(name, class, reason string, start time.Time) Run {
	first, _, _ := strings.Cut(reason, "\n")
	return Run{Name: name, Start: start, CannotRun: reason, Cases: []Case{{
		Suite: "run", Class: class, Name: "the run could be made", State: Errored,
		Message: "the run could not be made: " + first, Kind: "cannot-run", Detail: reason,
	}}}
}

// WriteFile writes a report file, creating its directory.
func WriteFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
