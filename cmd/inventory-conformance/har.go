package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// harOptions are the flags of the HAR check, --har FILE.
type harOptions struct {
	File        string `name:"har" placeholder:"FILE" help:"the HAR FILE to check"`
	BaseURL     string `name:"base-url" placeholder:"URL" help:"check only the entries under this URL, whose path stands for the contract's /v1; default: every entry whose path is under /v1"`
	Spec        string `name:"spec" placeholder:"FILE" help:"check against this OpenAPI FILE instead of the embedded contract"`
	ReportJSONL string `name:"report-jsonl" placeholder:"FILE" help:"write each violation to FILE as a JSON line"`
	cli.Reports `embed:""`
	APIKey      string   `name:"api-key" placeholder:"KEY" help:"a KEY to hide wherever it appears (default $$INVENTORY_API_KEY); the recording's own credentials are hidden anyway"`
	BodyLimit   int      `name:"body-check-limit" default:"1048576" placeholder:"BYTES" help:"bytes of each body checked; a longer one is reported too large to check"`
	Ignore      []string `name:"ignore-rule" placeholder:"PATTERN" help:"leave out violations of the rules matching this PATTERN, such as request-* (repeatable)"`
}

// harParser returns the parser of the HAR check's flags into o.
func harParser(o *harOptions) *cli.Parser {
	return cli.New("inventory-conformance --har", o, map[string]string{"reports_for": "", "reports_at": "", "reports_of": "the traffic"}, false)
}

// isHAR reports whether args ask for the HAR check.
func isHAR(args []string) bool {
	return slices.ContainsFunc(cli.FlagArgs(args), func(f cli.FlagArg) bool { return f.Name == "har" })
}

// suiteOnly returns the first flag of args that the run against a target
// has and the HAR check (har) does not; "" if none.
func suiteOnly(har *cli.Parser, args []string) string {
	suite := suiteParser(&options{})
	for _, f := range cli.FlagArgs(args) {
		if !har.Has(f.Name) && suite.Has(f.Name) {
			return f.Name
		}
	}
	return ""
}

// runHAR checks the traffic recorded in a HAR file against the contract,
// when args ask for it (--har FILE), instead of running the checks
// against a target, and reports whether it did. Exit status: 0 no
// violation, 1 violations (listed, grouped), 2 the file cannot be read or
// holds none of the contract's traffic.
func runHAR(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (int, bool) {
	if !isHAR(args) {
		return 0, false
	}
	errOut := argSecrets(args, getenv).Writer(stderr)
	defer errOut.Flush()
	cannot := func(format string, a ...any) (int, bool) {
		fmt.Fprintf(errOut, "inventory-conformance: cannot check the HAR file: "+format+"\n", a...)
		return cli.ExitCannotRun, true
	}
	var o harOptions
	fs := harParser(&o)
	if err := fs.Parse(args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			harUsage(stdout, fs)
			return cli.ExitOK, true
		}
		if name := suiteOnly(fs, args); name != "" {
			return cannot("--%s does not apply to --har: it is a flag of a run against a target (--base-url); the HAR check sends nothing (see --har --help)", name)
		}
		return cannot("%s", doubleDash(err.Error()))
	}
	o.APIKey = cmp.Or(o.APIKey, getenv("INVENTORY_API_KEY"))
	doc := spec.Document
	if o.Spec != "" {
		var err error
		if doc, err = os.ReadFile(o.Spec); err != nil {
			return cannot("--spec: %v", err)
		}
	}
	contract, err := spec.Load(doc)
	if err != nil {
		return cannot("%v", err)
	}
	filter, err := spec.NewRuleFilter(o.Ignore)
	if err != nil {
		return cannot("--ignore-rule: %v", err)
	}
	m := exchange.HARMapping{BasePath: contract.BasePath, Limit: o.BodyLimit}
	if o.BaseURL != "" {
		u, err := url.Parse(strings.TrimSuffix(o.BaseURL, "/"))
		if err != nil || u.Host == "" {
			return cannot("--base-url %q: want the address the recording used, such as https://staging.example.com/v1", o.BaseURL)
		}
		m.Base = u
	}
	in, err := os.Open(o.File)
	if err != nil {
		return cannot("%v", err)
	}
	defer in.Close()
	opts := spec.FindingsOptions{Redactor: conformance.KeyRedactor(o.APIKey)}
	if o.ReportJSONL != "" {
		jsonl, err := cli.CreateReport(o.ReportJSONL)
		if err != nil {
			return cannot("--report-jsonl: %v", err)
		}
		defer jsonl.Close()
		opts.JSONL = jsonl
	}
	findings := spec.NewFindings(contract, opts)
	judge := spec.NewJudge(contract, filter)
	checked, entries := 0, 0
	skipped := map[string]int{}
	err = exchange.ReadHAR(in, func(e *exchange.HAREntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries++
		x, why := m.Exchange(e)
		if x == nil {
			skipped[why]++
			return nil
		}
		checked++
		rv, vs := judge.Exchange(x)
		findings.Record(x, rv.Name, vs)
		return nil
	})
	if err != nil {
		return cannot("%s: %v", o.File, err)
	}
	fmt.Fprintf(stdout, "Checked %d of the %d entries of %s against the contract%s\n", checked, entries, filepath.Base(o.File), skippedNote(skipped))
	if checked == 0 {
		return cannot("%s holds no exchange under %s to check (see --base-url)", o.File, harScope(m))
	}
	run := spec.Traffic("inventory-conformance --har "+filepath.Base(o.File), contract, findings)
	run.Facts = []report.Property{{Name: "recording", Value: filepath.Base(o.File)}, {Name: "entries checked", Value: fmt.Sprintf("%d of %d%s", checked, entries, skippedNote(skipped))}}
	run.Coverage.Min = o.MinCoverage
	outputs := report.Outputs{JUnit: o.JUnit, Markdown: o.Markdown, HTML: o.HTML}
	outputs.GitHub(getenv, stdout)
	if err := outputs.Write(run, findings.Redactor()); err != nil {
		return cannot("%v", err)
	}
	if err := findings.Err(); err != nil {
		return cannot("--report-jsonl: %v", err)
	}
	spec.WriteFindings(stdout, findings)
	fmt.Fprintf(stdout, "\nCoverage: %s\n", run.Coverage.Headline())
	if g := run.Coverage.Gate(); g != "" {
		fmt.Fprintf(stdout, "%s\n", g)
	}
	if findings.Errors() > 0 || !run.Coverage.Met() {
		return cli.ExitFailed, true
	}
	return cli.ExitOK, true
}

// skippedNote says which entries were left out and why.
func skippedNote(skipped map[string]int) string {
	if len(skipped) == 0 {
		return ""
	}
	var parts []string
	for why, n := range skipped {
		parts = append(parts, fmt.Sprintf("%d %s", n, why))
	}
	sort.Strings(parts)
	return " (left out: " + strings.Join(parts, ", ") + ")"
}

// harScope names the entries a mapping checks.
func harScope(m exchange.HARMapping) string {
	if m.Base != nil {
		return m.Base.Redacted()
	}
	return m.BasePath
}

// harUsage writes the HAR check's help.
func harUsage(w io.Writer, p *cli.Parser) {
	fmt.Fprintf(w, "Usage: inventory-conformance --har FILE [flags]\n\nChecks the traffic a browser or a test runner recorded in a HAR file against the contract.\n\nFlags:\n")
	for _, l := range p.Lines(nil) {
		fmt.Fprintf(w, "  %-28s %s\n", l.Flag, l.Help)
	}
	fmt.Fprintf(w, "\nExit status: 0 no violation; 1 violations (listed, grouped), or coverage below --min-coverage; 2 the file cannot be read or holds no traffic to check.\n")
}
