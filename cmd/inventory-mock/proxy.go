package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/proxy"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
	"github.com/petstore/inventory-kit/spec/report"
)

// proxyOptions are the settings of proxy mode, --proxy-to: flags of
// options, the group --help lists under the validating proxy.
type proxyOptions struct {
	To              string `name:"proxy-to" env:"INVENTORY_MOCK_PROXY_TO" placeholder:"URL" help:"be a validating proxy instead of the mock: forward to the backend at this URL, its base path included, such as https://staging.example.com/v1, and check the traffic against the spec"`
	Enforce         bool   `name:"enforce" env:"INVENTORY_MOCK_ENFORCE" help:"proxy: answer 400 to a request and 502 to an answer that breaks the contract, instead of passing them"`
	ReportJSONL     string `name:"report-jsonl" env:"INVENTORY_MOCK_REPORT_JSONL" placeholder:"FILE" help:"proxy: write each violation to this file as a JSON line, as it happens"`
	cli.Reports     `embed:"" envprefix:"INVENTORY_MOCK_"`
	FailOnViolation bool          `name:"fail-on-violation" env:"INVENTORY_MOCK_FAIL_ON_VIOLATION" help:"proxy: exit 1 at shutdown if a violation was seen (warnings do not count)"`
	HAROut          string        `name:"har-out" env:"INVENTORY_MOCK_HAR_OUT" placeholder:"FILE" help:"proxy: record every exchange to this HAR file, credentials redacted"`
	CACert          string        `name:"upstream-ca-cert" env:"INVENTORY_MOCK_UPSTREAM_CA_CERT" placeholder:"FILE" help:"proxy and --fixtures-from: PEM file of CA certificates to trust for the backend, besides the system's"`
	Insecure        bool          `name:"upstream-insecure-skip-verify" env:"INVENTORY_MOCK_UPSTREAM_INSECURE_SKIP_VERIFY" help:"proxy and --fixtures-from: do not verify the backend's TLS certificate"`
	Timeout         time.Duration `name:"upstream-timeout" env:"INVENTORY_MOCK_UPSTREAM_TIMEOUT" default:"${timeout}" placeholder:"DURATION" help:"proxy: answer 504 when the backend sends nothing for this duration (--fixtures-from: give up)"`
	BodyLimit       int           `name:"body-check-limit" env:"INVENTORY_MOCK_BODY_CHECK_LIMIT" default:"${body_limit}" placeholder:"BYTES" help:"proxy: bytes of each body checked; a longer body passes whole, unchecked, with a warning"`
	MemoryBudget    int64         `name:"proxy-memory-budget" env:"INVENTORY_MOCK_PROXY_MEMORY_BUDGET" placeholder:"BYTES" help:"proxy: bytes of bodies all exchanges hold for the checks at once, of requests and answers (decoded text included); a body that finds them held passes whole, unchecked, with a warning; 0: 64 times --body-check-limit"`
	Ignore          []string      `name:"ignore-rule" env:"INVENTORY_MOCK_IGNORE_RULE" placeholder:"PATTERN" help:"proxy: leave out violations of the rules matching this pattern, such as request-* (repeatable)"`

	ignore spec.RuleFilter // Ignore, parsed
}

// check reports flags that make no sense together with proxy mode, or
// without it.
func (p *proxyOptions) check(o *options) error {
	if p.To == "" {
		switch {
		case p.Enforce, p.ReportJSONL != "", p.JUnit != "", p.Markdown != "", p.HTML != "", p.MinCoverage != 0,
			p.FailOnViolation, p.HAROut != "", len(p.Ignore) > 0, p.MemoryBudget != 0:
			return errors.New("--enforce, --report-jsonl, --junit-report, --markdown-report, --html-report, --min-coverage, --fail-on-violation, --har-out, --ignore-rule and --proxy-memory-budget need --proxy-to")
		case (p.CACert != "" || p.Insecure) && o.Staging.FixturesFrom == "":
			return errors.New("--upstream-ca-cert and --upstream-insecure-skip-verify need --proxy-to or --fixtures-from")
		case p.Timeout <= 0:
			return errors.New("--upstream-timeout must be positive")
		}
		return nil
	}
	switch {
	case o.Generate > 0 || o.Fixtures != "" || o.PrintFixtures:
		return errors.New("--proxy-to: the proxy serves no data; --generate, --fixtures and --print-fixtures do not apply")
	case len(o.Latency) > 0 || len(o.Fault) > 0:
		return errors.New("--proxy-to: --latency and --fault are the mock's")
	case o.given["store"]:
		return errors.New("--proxy-to: the proxy keeps no records; --store does not apply")
	case len(o.CORSOrigins) > 0:
		return errors.New("--proxy-to: CORS headers and preflights are the backend's, passed as they come; --cors-origin does not apply")
	case len(o.AdminOrigins) > 0:
		return errors.New("--proxy-to: the proxy's admin API takes no changes from browser pages; --admin-origin does not apply")
	case p.Timeout <= 0 || p.BodyLimit <= 0:
		return errors.New("--upstream-timeout and --body-check-limit must be positive")
	case p.MemoryBudget < 0:
		return errors.New("--proxy-memory-budget must be positive, or 0 for 64 times --body-check-limit")
	}
	var err error
	if p.ignore, err = spec.NewRuleFilter(p.Ignore); err != nil {
		return fmt.Errorf("--ignore-rule: %v", err)
	}
	return nil
}

// runProxy serves proxy mode until ctx is done, then writes the reports
// and says whether violations were seen.
func runProxy(ctx context.Context, o *options, lookupEnv func(string) (string, bool), stdout io.Writer, logger *slog.Logger, start time.Time, ready func(addr string)) (err error) {
	p := &o.Proxy
	contract, err := loadContract(o)
	if err != nil {
		return err
	}
	if err := checkUpstream(p.To, contract.BasePath); err != nil {
		return err
	}
	rd := httpapi.NewKeys(o.APIKeys, o.AdminKey).Redactor
	var closers []func() error
	defer func() {
		for _, c := range closers {
			if cerr := c(); err == nil {
				err = cerr
			}
		}
	}()
	var jsonl io.Writer
	if p.ReportJSONL != "" {
		f, err := cli.CreateReport(p.ReportJSONL)
		if err != nil {
			return fmt.Errorf("--report-jsonl: %w", err)
		}
		jsonl = f
		closers = append(closers, f.Close)
	}
	for _, r := range []struct{ flag, path string }{{"--junit-report", p.JUnit}, {"--markdown-report", p.Markdown}, {"--html-report", p.HTML}} {
		if r.path == "" {
			continue
		}
		f, err := cli.CreateReport(r.path) // now, so that a path that cannot be written stops start-up
		if err != nil {
			return fmt.Errorf("%s: %w", r.flag, err)
		}
		f.Close()
	}
	findings := spec.NewFindings(contract, spec.FindingsOptions{Redactor: rd, KeyVar: exchange.APIKeyVar, JSONL: jsonl, OnNew: func(f spec.Finding) {
		logger.Warn("contract violation", "id", f.ID, "operation", f.Operation, "rule", f.Rule, "where", f.Where, "path", f.Path, "status", f.Status, "message", f.Message)
	}})
	var har *exchange.HARWriter
	if p.HAROut != "" {
		f, err := cli.CreateReport(p.HAROut)
		if err != nil {
			return fmt.Errorf("--har-out: %w", err)
		}
		if har, err = exchange.NewHARWriter(f, "inventory-mock", cli.Version(version), rd); err != nil {
			f.Close()
			return err
		}
		closers = append([]func() error{har.Close, f.Close}, closers...)
	}
	transport, err := proxy.NewTransport(proxy.TransportOptions{CACertFile: p.CACert, InsecureSkipVerify: p.Insecure, Timeout: p.Timeout})
	if err != nil {
		return fmt.Errorf("--upstream-ca-cert: %w", err)
	}
	budget := p.MemoryBudget
	if budget == 0 {
		budget = proxy.BudgetBodies * int64(p.BodyLimit)
	}
	if limit, _ := lookupEnv("GOMEMLIMIT"); limit == "" {
		// The checks hold at most the budget; a soft limit of twice that
		// and 64 MiB keeps the collector ahead of the garbage hostile
		// answers leave, such as gzip bombs from many clients at once.
		// Set back on return.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(2*budget + 64<<20))
	}
	px, err := proxy.New(proxy.Config{
		Contract: contract, Upstream: p.To, Transport: transport, Timeout: p.Timeout,
		Enforce: p.Enforce, BodyLimit: p.BodyLimit, Budget: budget, Ignore: p.ignore, Findings: findings, HAR: har,
		AdminKey: o.AdminKey, APIKeys: o.APIKeys, Logger: logger, Metrics: o.Staging.m,
	})
	if err != nil {
		return err
	}
	tuneGC(lookupEnv, 0, 0)
	upstream := redactedURL(p.To) // a URL: proxy.New refuses one that is not
	hosts, err := httpapi.NewHosts(adminHosts(o))
	if err != nil {
		return err
	}
	guard, err := httpapi.AdminGuard([]string{spec.AdminBasePath(), metrics.Path}, hosts, nil, rd, nil)
	if err != nil {
		return err
	}
	cut, err := serve(ctx, o, httpapi.Steps(px, guard), logger, ready, func(addr string) {
		// Once listening: never before a refusal of the settings.
		if len(o.APIKeys) == 0 && o.AdminKey == "" {
			logger.Warn("no --admin-key or --api-key: /__admin/violations takes the development key (see mockserver/proxy/README.md)")
		}
		logger.Info("proxying", "url", addr+contract.BasePath, "to", upstream, "enforce", p.Enforce,
			"startup", time.Since(start).Round(time.Microsecond), "version", cli.Version(version))
	})
	if err != nil {
		return err
	}
	outputs := report.Outputs{JUnit: p.JUnit, Markdown: p.Markdown, HTML: p.HTML}
	outputs.GitHub(func(k string) string { v, _ := lookupEnv(k); return v }, stdout)
	return finishProxy(p, contract, findings, outputs, upstream, cut, logger)
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
func finishProxy(p *proxyOptions, contract *spec.Contract, findings *spec.Findings, outputs report.Outputs, upstream string, cut []cutRequest, logger *slog.Logger) error {
	run := spec.Traffic("inventory-mock contract proxy", contract, findings)
	run.Facts = []report.Property{{Name: "backend", Value: upstream}}
	if p.Enforce {
		run.Facts = append(run.Facts, report.Property{Name: "mode", Value: "enforcing"})
	}
	if len(cut) > 0 {
		// Stopped with requests in flight past --shutdown-grace: their
		// answers were not seen, so not checked.
		note := report.Note{Title: fmt.Sprintf("Cut at shutdown: %d still in flight after --shutdown-grace, their answers not checked", len(cut))}
		for _, c := range cut {
			note.Lines = append(note.Lines, c.String())
			run.Properties = append(run.Properties, report.Property{Name: "cut at shutdown", Value: c.String()})
		}
		run.Notes = append(run.Notes, note)
	}
	run.Coverage.Min = float64(p.MinCoverage)
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
	case p.FailOnViolation && errs > 0:
		// The counts in the words of the reports (report.RequestFindings),
		// right for one violation and for many; the groups are in the
		// tally above and in the reports.
		return cli.Failed(fmt.Errorf("the traffic broke the contract (--fail-on-violation): %s", report.RequestFindings(requests, errs-requests)))
	case !run.Coverage.Met():
		return cli.Failed(errors.New(run.Coverage.Gate()))
	}
	return nil
}
