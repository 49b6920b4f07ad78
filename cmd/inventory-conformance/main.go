// Command inventory-conformance checks whether a Pet Store Inventory
// implementation honours the contract: the mock, a local backend, staging,
// or (read-only) production.
//
//	inventory-conformance --base-url https://staging.example.com/v1 --api-key KEY
//
// It exits 0 when every check passed, 1 when the target broke the contract,
// and 2 when the run could not be made.
package main

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/conformance/checks"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/report"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// memoryLimit is the heap Go's collector is asked to stay under, unless
// GOMEMLIMIT says otherwise: the suite's live memory is about 20 bytes
// per byte of the longest list, and without a limit the collector lets
// the heap grow to twice that between collections.
const memoryLimit = 400 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	cli.Main("inventory-conformance", run)
}

// run runs the checks, or the HAR check (a cli.Run). It says itself, on
// stdout and stderr through the redactor of the key, why it ends, so the
// error it returns has no words: cli.Failed for a target that broke the
// contract, cli.Said for a run that could not be made.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	getenv := func(k string) string { v, _ := lookupEnv(k); return v }
	switch conform(ctx, args, getenv, stdout, stderr) {
	case cli.ExitOK:
		return nil
	case cli.ExitFailed:
		return cli.Failed(nil)
	}
	return cli.Said
}

// conform parses args, prepares the target and runs the checks, and
// returns the exit status. Everything it and Ginkgo write goes through one
// redactor of the key.
func conform(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if code, ok := runHAR(ctx, args, getenv, stdout, stderr); ok {
		return code
	}
	var o options
	if err := suiteParser(&o).Parse(args, nil); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout)
			return cli.ExitOK
		}
		// The report paths may come after the mistake, which stops the
		// parse: read them from the arguments, so that no stale report
		// survives a bad flag either.
		secrets := argSecrets(args, getenv)
		errOut := secrets.Writer(stderr)
		defer errOut.Flush()
		msg := doubleDash(err.Error())
		fmt.Fprintf(errOut, "inventory-conformance: %s\n", msg)
		if err := newReportFiles(reportPaths(args), getenv, stdout, secrets).cannotRun(msg); err != nil {
			fmt.Fprintf(errOut, "inventory-conformance: %v\n", err)
		}
		return cli.ExitCannotRun
	}
	if o.Version {
		fmt.Fprintf(stdout, "inventory-conformance %s\n", cli.Version(version))
		return cli.ExitOK
	}
	if o.APIKey == "" && o.APIKeyCommand == "" {
		o.APIKey = getenv(conformance.KeyVar)
	}
	secrets := conformance.NewSecrets(append(headerSecrets(o.Headers), conformance.KeySecret(o.APIKey))...)
	out, errOut := secrets.Writer(stdout), secrets.Writer(stderr)
	defer out.Flush()
	defer errOut.Flush()
	reports := newReportFiles(reportFiles{out: report.Outputs{JUnit: o.JUnit, Markdown: o.Markdown, HTML: o.HTML}, json: o.JSONReport}, getenv, out, secrets)
	cannot := func(format string, a ...any) int {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(errOut, "inventory-conformance: cannot run: %s\n", msg)
		if err := reports.cannotRun(msg); err != nil {
			fmt.Fprintf(errOut, "inventory-conformance: %v\n", err)
		}
		return cli.ExitCannotRun
	}
	if o.List {
		reports = reportFiles{secrets: secrets} // --list runs nothing: it writes no report, and tells GitHub nothing
	}
	if err := reports.stale(); err != nil {
		fmt.Fprintf(errOut, "inventory-conformance: cannot run: %v\n", err)
		return cli.ExitCannotRun
	}
	if o.BaseURL == "" && !o.List {
		return cannot("--base-url is required (see --help)")
	}
	headers, err := parseHeaders(o.Headers)
	if err != nil {
		return cannot("%v", err)
	}
	switch {
	case o.Timeout <= 0:
		return cannot("--timeout must be positive")
	case o.ExploreSteps < -1:
		return cannot("--explore-steps must not be negative")
	case o.ExploreTime < 0:
		return cannot("--explore-time must not be negative")
	case o.MaxRetryWait < 0:
		return cannot("--max-retry-wait must not be negative")
	case o.Workers <= 0 || o.Workers > 256:
		return cannot("--workers must be from 1 to 256")
	case o.MaxRunTime < 0:
		return cannot("--max-run-time must not be negative")
	case o.APIKey != "" && o.APIKeyCommand != "":
		return cannot("--api-key and --api-key-command: give one")
	}
	if _, err := types.ParseLabelFilter(o.LabelFilter); err != nil {
		return cannot("--label-filter %s: %s", exchange.Quote(o.LabelFilter), plain(err.Error()))
	}
	contract, contractName, err := loadContract(o.Spec)
	if err != nil {
		return cannot("%v", err)
	}
	cfg := conformance.Config{
		BaseURL:          o.BaseURL,
		APIKey:           o.APIKey,
		KeyCommand:       o.APIKeyCommand,
		Headers:          headers,
		Secrets:          secrets,
		Workers:          o.Workers,
		MaxRunTime:       o.MaxRunTime,
		Contract:         contract,
		AllowMutations:   o.AllowMutations,
		PetID:            o.PetID,
		Strict:           o.Strict,
		Timeout:          o.Timeout,
		CACertFile:       o.CACert,
		InsecureTLS:      o.InsecureTLS,
		MaxResponseBytes: o.MaxResponseBytes,
		MaxRunBytes:      o.MaxRunBytes,
		MaxRetryWait:     cmp.Or(o.MaxRetryWait, time.Nanosecond), // 0: no waiting at all
		Explore: conformance.ExploreConfig{
			Off:   o.ExploreSteps == 0 || o.ExploreTime == 0,
			Steps: max(o.ExploreSteps, 0),
			Time:  o.ExploreTime,
			Seed:  o.Seed,
		},
		Stderr: errOut,
	}
	if o.Verbose {
		cfg.Trace = out
	}
	if o.List {
		return list(cfg, o, out, errOut, cannot)
	}
	target, err := conformance.Prepare(ctx, cfg)
	if err != nil {
		return cannot("%v", err)
	}
	defer target.Close()
	mode := "read-only (mutating checks are skipped)"
	switch {
	case o.AllowMutations && target.ListBroken() != "":
		mode = "mutations allowed, but " + target.ListBroken() + ": no record to write to"
	case o.AllowMutations && o.PetID != 0:
		mode = fmt.Sprintf("mutations allowed on %s %d only, restored afterwards", target.Inventory().Key, target.PetID())
	case o.AllowMutations:
		mode = fmt.Sprintf("mutations allowed: the checks write to %s %d, the exploration to records of its own; each restored afterwards", target.Inventory().Key, target.PetID())
	}
	fmt.Fprintf(out, "Checking %s against %s: %s\n", o.BaseURL, contractName, mode)

	// A run that finished restored what it wrote and wrote the list of
	// what it left changed (Records.Settle) to every report and stderr.
	outcome, runErr, finished := runChecks(target, o, reports, out, errOut, contractName)
	switch {
	case !finished:
		if left := target.Settle(); len(left) > 0 {
			report.WriteLeftChanged(errOut, left)
		}
		// Interrupted, and the checks did not stop in time: no report
		// of them could be written.
		fmt.Fprintln(errOut, "inventory-conformance: interrupted: the run is incomplete; every record written to was restored unless reported above")
		_ = reports.cannotRun("interrupted: the run is incomplete (" + exchange.FirstLine(summaryLine(outcome)) + ")")
		return cli.ExitCannotRun
	case runErr != nil:
		return cannot("writing the reports: %v", runErr)
	case outcome.Stopped != "":
		// The reports hold every failure found until then, and why the
		// run stopped.
		fmt.Fprintf(errOut, "inventory-conformance: the run stopped before its checks were done: %s; every record written to was restored unless reported above\n", outcome.Stopped)
		return cli.ExitCannotRun
	case !outcome.Passed:
		return cli.ExitFailed
	}
	return cli.ExitOK
}

// loadContract loads --spec, or the embedded contract.
func loadContract(file string) (*spec.Contract, string, error) {
	if file == "" {
		c, err := spec.Shared()
		return c, "the embedded contract", err
	}
	doc, err := os.ReadFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("--spec: %v", err)
	}
	c, err := spec.Load(doc)
	if err != nil {
		return nil, "", fmt.Errorf("--spec %s: %v", file, err)
	}
	return c, file, nil
}

// list prints every check the contract gives, with its labels.
func list(cfg conformance.Config, o options, out, errOut io.Writer, cannot func(string, ...any) int) int {
	cfg.BaseURL = cmp.Or(cfg.BaseURL, "http://listing.invalid"+cfg.Contract.BasePath)
	target, err := conformance.NewTarget(cfg)
	if err != nil {
		return cannot("%v", err)
	}
	outcome, err := conformance.Run(target, checks.Register, conformance.RunOptions{DryRun: true, LabelFilter: o.LabelFilter, Stdout: io.Discard})
	if err != nil {
		return cannot("%v", err)
	}
	var lines []string
	for _, s := range outcome.Report.SpecReports {
		if s.LeafNodeType == types.NodeTypeIt && s.State != types.SpecStateSkipped {
			lines = append(lines, fmt.Sprintf("%s  [%s]", conformance.FullName(s), strings.Join(s.Labels(), ", ")))
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	fmt.Fprintf(out, "%d checks\n", len(lines))
	return cli.ExitOK
}

// runChecks runs the checks. On SIGINT or SIGTERM, the run stops: Ginkgo
// stops the current check and runs its cleanups, which restore what the
// check changed, and the reports say the run was interrupted; run
// restores anything left after it returns. A second signal, or checks that
// do not stop within a grace period, give up waiting: then it reports the
// run not finished.
func runChecks(target *conformance.Target, o options, reports reportFiles, out, errOut io.Writer, contractName string) (conformance.Outcome, error, bool) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	type result struct {
		outcome conformance.Outcome
		err     error
	}
	done := make(chan result, 1)
	go func() {
		oc, err := conformance.Run(target, checks.Register, conformance.RunOptions{
			LabelFilter:    o.LabelFilter,
			Verbose:        o.Verbose,
			Stdout:         out,
			JUnitReport:    reports.out.JUnit,
			JSONReport:     reports.json,
			MarkdownReport: reports.out.Markdown,
			HTMLReport:     reports.out.HTML,
			StepSummary:    reports.out.StepSummary,
			Annotations:    reports.out.Annotations,
			MinCoverage:    o.MinCoverage,
			Info:           conformance.RunInfo{Target: o.BaseURL, Contract: contractName},
		})
		done <- result{oc, err}
	}()
	select {
	case r := <-done:
		return r.outcome, r.err, true
	case <-sigs:
	}
	target.Halt("interrupted: the run is incomplete")
	fmt.Fprintln(errOut, "\ninventory-conformance: interrupted; stopping the current check and restoring what it changed")
	select {
	case r := <-done:
		return r.outcome, r.err, true
	case <-sigs:
	case <-time.After(2*o.Timeout + 5*time.Second):
	}
	return conformance.Outcome{}, nil, false
}

// summaryLine is the outcome's counts on one line.
func summaryLine(oc conformance.Outcome) string {
	n := map[string]int64{}
	for _, c := range oc.Run.Counts {
		n[c.Label] = c.N
	}
	return fmt.Sprintf("%d passed, %d failed, %d skipped before the interrupt", n["passed"], n["failed"], n["skipped"])
}

// reportFiles are the reports of a run, GitHub's included.
type reportFiles struct {
	out     report.Outputs
	json    string
	secrets *conformance.Secrets
}

// newReportFiles returns the reports at r's paths, with secrets, and
// GitHub's from getenv (annotations to w).
func newReportFiles(r reportFiles, getenv func(string) string, w io.Writer, secrets *conformance.Secrets) reportFiles {
	r.secrets = secrets
	r.out.GitHub(getenv, w)
	return r
}

// stale replaces every report file with one saying the run did not
// finish, before anything else can fail: a stale green report must never
// survive a run that stops short. It appends and annotates nothing.
func (r reportFiles) stale() error {
	return conformance.WriteCannotRun(r.out.Files(), r.json, "the run did not finish (it stopped before writing its report)", r.secrets.Redactor())
}

// cannotRun writes reports saying the run could not be made, and why.
func (r reportFiles) cannotRun(reason string) error {
	return conformance.WriteCannotRun(r.out, r.json, reason, r.secrets.Redactor())
}

// plain strips terminal colour codes and blank lines from a Ginkgo error.
func plain(s string) string {
	s = regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(s, "")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return strings.Join(lines, "; ")
}

// flagValues returns the values of the flags names given in args, in
// any of the forms the flag package reads (one or two dashes, VALUE as the
// next argument or after "="), wherever they stand: a parse that stops at
// a mistake has not read them yet.
func flagValues(args []string, names ...string) map[string][]string {
	values := map[string][]string{}
	for _, f := range cli.FlagArgs(args) {
		if (f.Inline || f.Value != "") && slices.Contains(names, f.Name) {
			values[f.Name] = append(values[f.Name], f.Value)
		}
	}
	return values
}

// reportPaths finds the report flags in args, the last of each.
func reportPaths(args []string) reportFiles {
	v := flagValues(args, "junit-report", "json-report", "markdown-report", "html-report")
	last := func(name string) string {
		if vs := v[name]; len(vs) > 0 {
			return vs[len(vs)-1]
		}
		return ""
	}
	return reportFiles{out: report.Outputs{JUnit: last("junit-report"), Markdown: last("markdown-report"), HTML: last("html-report")}, json: last("json-report")}
}

// argSecrets are the secrets of a command line a parse did not finish:
// every --api-key and --header value in args, and the key's variable.
func argSecrets(args []string, getenv func(string) string) *conformance.Secrets {
	v := flagValues(args, "api-key", "header")
	secrets := conformance.NewSecrets(append(headerSecrets(v["header"]), conformance.KeySecret(getenv(conformance.KeyVar)))...)
	for _, k := range v["api-key"] {
		secrets.Add(conformance.KeySecret(k))
	}
	return secrets
}

// singleDash finds a flag name written with Go's one dash in a message of
// the flag package ("flag provided but not defined: -nope").
var singleDash = regexp.MustCompile(`(^|[\s:])-([A-Za-z][A-Za-z0-9-]*)`)

// doubleDash writes flag names in a message as the help does, --name.
func doubleDash(msg string) string { return singleDash.ReplaceAllString(msg, "$1--$2") }
