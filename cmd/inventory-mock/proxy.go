package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance/report"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/proxy"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// proxyOptions are the settings of proxy mode, --proxy-to.
type proxyOptions struct {
	to              string
	enforce         bool
	reportJSONL     string
	junitReport     string
	markdownReport  string
	htmlReport      string
	minCoverage     report.Percent
	failOnViolation bool
	harOut          string
	caCert          string
	insecure        bool
	timeout         time.Duration
	bodyLimit       int
	ignore          listFlag
}

// proxyFlags declares the flags of proxy mode on fs.
func proxyFlags(fs *flag.FlagSet, p *proxyOptions) {
	fs.StringVar(&p.to, "proxy-to", "", "be a validating proxy instead of the mock: forward to the backend at this `URL`, its base path included, such as https://staging.example.com/v1, and check the traffic against the spec")
	fs.BoolVar(&p.enforce, "enforce", false, "proxy: answer 400 to a request and 502 to an answer that breaks the contract, instead of passing them")
	fs.StringVar(&p.reportJSONL, "report-jsonl", "", "proxy: write each violation to this `file` as a JSON line, as it happens")
	fs.StringVar(&p.junitReport, "junit-report", "", "proxy: write the violations as JUnit XML to this `file` at shutdown, one test case per operation and rule")
	fs.StringVar(&p.markdownReport, "markdown-report", "", "proxy: write a Markdown summary of the traffic to this `file` at shutdown (also appended to $GITHUB_STEP_SUMMARY where it is set)")
	fs.StringVar(&p.htmlReport, "html-report", "", "proxy: write the traffic's report as one self-contained HTML page to this `file` at shutdown")
	fs.Var(&p.minCoverage, "min-coverage", "proxy: exit 1 at shutdown when the traffic exercised less than this `percent` of the documented (operation, status) pairs")
	fs.BoolVar(&p.failOnViolation, "fail-on-violation", false, "proxy: exit 1 at shutdown if a violation was seen (warnings do not count)")
	fs.StringVar(&p.harOut, "har-out", "", "proxy: record every exchange to this HAR `file`, credentials redacted")
	fs.StringVar(&p.caCert, "upstream-ca-cert", "", "proxy and --fixtures-from: PEM `file` of CA certificates to trust for the backend, besides the system's")
	fs.BoolVar(&p.insecure, "upstream-insecure-skip-verify", false, "proxy and --fixtures-from: do not verify the backend's TLS certificate")
	fs.DurationVar(&p.timeout, "upstream-timeout", proxy.DefaultTimeout, "proxy: answer 504 when the backend sends nothing for this `duration` (--fixtures-from: give up)")
	fs.IntVar(&p.bodyLimit, "body-check-limit", proxy.DefaultBodyLimit, "proxy: `bytes` of each body checked; a longer body passes whole, unchecked, with a warning")
	fs.Var(&p.ignore, "ignore-rule", "proxy: leave out violations of the rules matching this `pattern`, such as request-* (repeatable)")
}

// check reports flags that make no sense together with proxy mode, or
// without it.
func (p *proxyOptions) check(o *options) error {
	if p.to == "" {
		switch {
		case p.enforce, p.reportJSONL != "", p.junitReport != "", p.markdownReport != "", p.htmlReport != "", p.minCoverage != 0,
			p.failOnViolation, p.harOut != "", len(p.ignore) > 0:
			return errors.New("--enforce, --report-jsonl, --junit-report, --markdown-report, --html-report, --min-coverage, --fail-on-violation, --har-out and --ignore-rule need --proxy-to")
		case (p.caCert != "" || p.insecure) && o.staging.fixturesFrom == "":
			return errors.New("--upstream-ca-cert and --upstream-insecure-skip-verify need --proxy-to or --fixtures-from")
		case p.timeout <= 0:
			return errors.New("--upstream-timeout must be positive")
		}
		return nil
	}
	switch {
	case o.generate > 0 || o.fixturesFile != "" || o.printFixtures:
		return errors.New("--proxy-to: the proxy serves no data; --generate, --fixtures and --print-fixtures do not apply")
	case len(o.latency) > 0 || len(o.fault) > 0:
		return errors.New("--proxy-to: --latency and --fault are the mock's")
	case o.given["store"]:
		return errors.New("--proxy-to: the proxy keeps no records; --store does not apply")
	case len(o.corsOrigins) > 0:
		return errors.New("--proxy-to: CORS headers and preflights are the backend's, passed as they come; --cors-origin does not apply")
	case len(o.adminOrigins) > 0:
		return errors.New("--proxy-to: the proxy's admin API takes no changes from browser pages; --admin-origin does not apply")
	case p.timeout <= 0 || p.bodyLimit <= 0:
		return errors.New("--upstream-timeout and --body-check-limit must be positive")
	}
	if _, err := spec.NewRuleFilter(p.ignore); err != nil {
		return fmt.Errorf("--ignore-rule: %v", err)
	}
	return nil
}

// runProxy serves proxy mode until ctx is done, then writes the reports
// and says whether violations were seen.
func runProxy(ctx context.Context, o *options, lookupEnv func(string) (string, bool), stdout io.Writer, logs slog.Handler, logger *slog.Logger, start time.Time, ready func(addr string)) (err error) {
	p := &o.proxy
	contract, err := loadContract(o.specFile)
	if err != nil {
		return err
	}
	if err := checkUpstream(p.to, contract.BasePath); err != nil {
		return err
	}
	filter, err := spec.NewRuleFilter(p.ignore)
	if err != nil {
		return err
	}
	rd := httpapi.NewKeys(o.apiKeys, string(o.adminKey)).Redactor
	var closers []func() error
	defer func() {
		for _, c := range closers {
			if cerr := c(); err == nil {
				err = cerr
			}
		}
	}()
	var jsonl io.Writer
	if p.reportJSONL != "" {
		f, err := create(p.reportJSONL)
		if err != nil {
			return fmt.Errorf("--report-jsonl: %w", err)
		}
		jsonl = f
		closers = append(closers, f.Close)
	}
	for _, r := range []struct{ flag, path string }{{"--junit-report", p.junitReport}, {"--markdown-report", p.markdownReport}, {"--html-report", p.htmlReport}} {
		if r.path == "" {
			continue
		}
		f, err := create(r.path) // now, so that a path that cannot be written stops start-up
		if err != nil {
			return fmt.Errorf("%s: %w", r.flag, err)
		}
		f.Close()
	}
	findings := spec.NewFindings(contract, spec.FindingsOptions{Redactor: rd, JSONL: jsonl, OnNew: func(f spec.Finding) {
		logger.Warn("contract violation", "id", f.ID, "operation", f.Operation, "rule", f.Rule, "where", f.Where, "path", f.Path, "status", f.Status, "message", f.Message)
	}})
	var har *exchange.HARWriter
	if p.harOut != "" {
		f, err := create(p.harOut)
		if err != nil {
			return fmt.Errorf("--har-out: %w", err)
		}
		if har, err = exchange.NewHARWriter(f, "inventory-mock", cli.Version(version), rd); err != nil {
			f.Close()
			return err
		}
		closers = append([]func() error{har.Close, f.Close}, closers...)
	}
	transport, err := proxy.NewTransport(proxy.TransportOptions{CACertFile: p.caCert, InsecureSkipVerify: p.insecure, Timeout: p.timeout})
	if err != nil {
		return fmt.Errorf("--upstream-ca-cert: %w", err)
	}
	px, err := proxy.New(proxy.Config{
		Contract: contract, Upstream: p.to, Transport: transport, Timeout: p.timeout,
		Enforce: p.enforce, BodyLimit: p.bodyLimit, Ignore: filter, Findings: findings, HAR: har,
		AdminKey: string(o.adminKey), APIKeys: o.apiKeys, Logger: logger, Metrics: o.staging.m,
	})
	if err != nil {
		return err
	}
	tuneGC(lookupEnv, 0, 0)
	upstream := p.to
	if u, err := url.Parse(p.to); err == nil {
		upstream = u.Redacted()
	}
	hosts, err := httpapi.NewHosts(adminHosts(o))
	if err != nil {
		return err
	}
	guard, err := httpapi.AdminGuard(spec.AdminBasePath(), hosts, nil, rd, nil)
	if err != nil {
		return err
	}
	err = serve(ctx, o, guard(px), logs, ready, func(addr string) {
		// Once listening: never before a refusal of the settings.
		if len(o.apiKeys) == 0 && o.adminKey == "" {
			logger.Warn("no --admin-key or --api-key: /__admin/violations takes the development key (see mockserver/proxy/README.md)")
		}
		logger.Info("proxying", "url", addr+contract.BasePath, "to", upstream, "enforce", p.enforce,
			"startup", time.Since(start).Round(time.Microsecond), "version", cli.Version(version))
	})
	if err != nil {
		return err
	}
	outputs := report.Outputs{JUnit: p.junitReport, Markdown: p.markdownReport, HTML: p.htmlReport}
	outputs.GitHub(func(k string) string { v, _ := lookupEnv(k); return v }, stdout)
	return finishProxy(p, contract, findings, outputs, upstream, logger)
}

// checkUpstream refuses a --proxy-to URL without a path where the spec's
// operations are under a base path: every request would reach the backend
// without it, be answered 404, and match no operation, so nothing would
// be checked.
func checkUpstream(to, basePath string) error {
	u, err := url.Parse(to)
	if err != nil || basePath == "" || strings.Trim(u.Path, "/") != "" {
		return nil // proxy.New says what is wrong with a URL that is not one
	}
	base := strings.TrimSuffix(u.Redacted(), "/")
	return cli.Usagef("--proxy-to %s: the URL has no path, but the spec's operations are under its base path %s; give the backend's URL with the path it serves them under, most likely %s%s", base, basePath, base, basePath)
}

// finishProxy writes the reports, logs the tally, and returns cli.Failed
// with --fail-on-violation if there were violations, or with
// --min-coverage if the traffic's coverage is below it.
func finishProxy(p *proxyOptions, contract *spec.Contract, findings *spec.Findings, outputs report.Outputs, upstream string, logger *slog.Logger) error {
	run := report.Traffic("inventory-mock contract proxy", contract, findings)
	run.Facts = []report.Property{{Name: "backend", Value: upstream}}
	if p.enforce {
		run.Facts = append(run.Facts, report.Property{Name: "mode", Value: "enforcing"})
	}
	run.Coverage.Min = float64(p.minCoverage)
	if err := outputs.Write(run, findings.Redactor()); err != nil {
		return err
	}
	if err := findings.Err(); err != nil {
		return fmt.Errorf("--report-jsonl: %w", err)
	}
	errs, groups := findings.Errors(), int64(len(findings.List()))
	var requests int64 // violations in what the clients sent
	for _, g := range findings.List() {
		if g.Severity == spec.SeverityError && g.Where == spec.WhereRequest {
			requests += g.Count
		}
	}
	byOp, unknown := findings.Traffic()
	exchanges := unknown
	for _, n := range byOp {
		exchanges += n
	}
	exercised, documented := run.Coverage.Figure()
	logger.Info("contract check", "exchanges", exchanges, "violations", errs, "in_requests", requests, "in_answers", errs-requests, "groups", groups, "dropped", findings.Dropped(),
		"coverage", run.Coverage.Headline(), "exercised", exercised, "documented", documented)
	switch {
	case p.failOnViolation && errs > 0:
		return cli.Failed(fmt.Errorf("%d contract violations in %d groups (--fail-on-violation): %s", errs, groups, report.RequestFindings(requests, errs-requests)))
	case !run.Coverage.Met():
		return cli.Failed(errors.New(run.Coverage.Gate()))
	}
	return nil
}

// create makes a report file, and its directory.
func create(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}
