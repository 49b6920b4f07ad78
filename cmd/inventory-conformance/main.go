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
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/petstore/inventory-kit/conformance"
)

// Exit statuses.
const (
	exitPassed    = 0 // every check passed
	exitFailed    = 1 // the target broke the contract
	exitCannotRun = 2 // bad flags, unreachable target, rejected key, unwritable report
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// options are the command-line flags.
type options struct {
	baseURL, apiKey, caCert     string
	allowMutations, insecureTLS bool
	verbose                     bool
	petID                       int64
	timeout                     time.Duration
	junitReport, jsonReport     string
	labelFilter                 string
}

// flags declares the flags on fs, one line of help each.
func flags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.baseURL, "base-url", "", "`URL` of the implementation, ending in /v1 (required)")
	fs.StringVar(&o.apiKey, "api-key", "", "the API `KEY`, sent as a bearer token (default $INVENTORY_API_KEY); never printed")
	fs.BoolVar(&o.allowMutations, "allow-mutations", false, "run the checks that write (each restores the quantity it changed)")
	fs.Int64Var(&o.petID, "pet-id", 0, "`ID` of the pet the mutating checks may touch (default: the first listed)")
	fs.StringVar(&o.caCert, "ca-cert", "", "PEM `FILE` of extra CA certificates to trust for the target")
	fs.BoolVar(&o.insecureTLS, "insecure-skip-verify", false, "do not verify the target's TLS certificate")
	fs.DurationVar(&o.timeout, "timeout", conformance.DefaultTimeout, "time limit for each request (default 10s)")
	fs.StringVar(&o.junitReport, "junit-report", "", "write a JUnit XML report to `FILE`")
	fs.StringVar(&o.jsonReport, "json-report", "", "write a Ginkgo JSON report to `FILE`")
	fs.StringVar(&o.labelFilter, "label-filter", "", "run only the checks whose labels match the `EXPR`, such as 'auth && !concurrency'")
	fs.BoolVar(&o.verbose, "verbose", false, "show every check and every observation as it runs")
	fs.String("har", "", "check the traffic recorded in a HAR `FILE` against the contract instead (--har FILE --help: its flags)")
}

// usage writes the help: what the command does, each flag on one line,
// and the exit statuses.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: inventory-conformance --base-url URL [flags]\n\n")
	fmt.Fprintf(w, "Checks that a Pet Store Inventory implementation honours the contract.\n\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		arg := "--" + f.Name
		if name != "" {
			arg += " " + strings.ToUpper(name)
		}
		fmt.Fprintf(w, "  %-28s %s\n", arg, text)
	})
	fmt.Fprintf(w, "  %-28s %s\n", "--help", "show this help")
	fmt.Fprintf(w, "\nExit status: 0 every check passed; 1 the target broke the contract; 2 the run could not be made.\n")
}

// run parses args, prepares the target and runs the suite. It returns the
// exit status. Ginkgo's progress goes to the process's standard output;
// run's own messages and the summary go to stdout and stderr.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if code, ok := runHAR(ctx, args, getenv, stdout, stderr); ok {
		return code
	}
	var o options
	fs := flag.NewFlagSet("inventory-conformance", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	flags(fs, &o)
	cannot := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "inventory-conformance: cannot run: "+format+"\n", a...)
		return exitCannotRun
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage(stdout, fs)
			return exitPassed
		}
		return cannot("%v (see --help)", err)
	}
	if fs.NArg() > 0 {
		return cannot("unexpected argument %q (see --help)", fs.Arg(0))
	}
	if o.baseURL == "" {
		return cannot("--base-url is required (see --help)")
	}
	if o.apiKey == "" {
		o.apiKey = getenv("INVENTORY_API_KEY")
	}
	if o.timeout <= 0 {
		return cannot("--timeout must be positive")
	}
	if _, err := types.ParseLabelFilter(o.labelFilter); err != nil {
		return cannot("--label-filter %q: %s", o.labelFilter, plain(err.Error()))
	}
	for _, f := range []struct{ flag, path string }{{"--junit-report", o.junitReport}, {"--json-report", o.jsonReport}} {
		if err := writable(f.path); err != nil {
			return cannot("%s: %v", f.flag, err)
		}
	}

	target, err := conformance.Prepare(ctx, conformance.Config{
		BaseURL:        o.baseURL,
		APIKey:         o.apiKey,
		AllowMutations: o.allowMutations,
		PetID:          o.petID,
		Timeout:        o.timeout,
		CACertFile:     o.caCert,
		InsecureTLS:    o.insecureTLS,
	})
	if err != nil {
		return cannot("%v", err)
	}
	conformance.Use(target)
	conformance.SummaryTo(stdout)
	mode := "read-only (mutating checks are skipped)"
	if o.allowMutations {
		mode = fmt.Sprintf("mutations allowed on petId %d, restored afterwards", target.PetID())
	}
	shown := o.baseURL
	if o.apiKey != "" {
		shown = strings.ReplaceAll(shown, o.apiKey, conformance.KeyPlaceholder)
	}
	fmt.Fprintf(stdout, "Checking %s: %s\n", shown, mode)

	passed, interrupted := runSuite(o, stderr)
	if failed := conformance.RestoreAll(); len(failed) > 0 {
		fmt.Fprintf(stderr, "\n!!! inventory-conformance: %d pets could NOT be restored; set them back by hand:\n  %s\n", len(failed), strings.Join(failed, "\n  "))
		passed = false
	}
	switch {
	case interrupted:
		fmt.Fprintln(stderr, "inventory-conformance: interrupted: the run is incomplete; every pet written to was restored unless reported above")
		return exitCannotRun
	case !passed:
		return exitFailed
	}
	return exitPassed
}

// runSuite runs the specs. On SIGINT or SIGTERM, Ginkgo stops the current
// check and runs its cleanups, which restore what the check changed; run
// restores anything left after it returns. A second signal, or a suite
// that does not stop within a grace period, gives up waiting.
func runSuite(o options, stderr io.Writer) (passed, interrupted bool) {
	suite, reporter := ginkgo.GinkgoConfiguration()
	suite.LabelFilter = o.labelFilter
	reporter.JUnitReport = o.junitReport
	reporter.JSONReport = o.jsonReport
	reporter.Verbose = o.verbose
	reporter.NoColor = true

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan bool, 1)
	go func() { done <- ginkgo.RunSpecs(&failer{}, conformance.SuiteName, suite, reporter) }()
	select {
	case passed = <-done:
		return passed, false
	case <-sigs:
	}
	fmt.Fprintln(stderr, "\ninventory-conformance: interrupted; stopping the current check and restoring what it changed")
	select {
	case <-done:
	case <-sigs:
	case <-time.After(2*o.timeout + 5*time.Second):
	}
	return false, true
}

// writable checks that a report can be written to path, creating its
// directory as Ginkgo will. An empty path is fine: no report.
func writable(path string) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o770); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	return f.Close()
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

// failer is the testing.T stand-in RunSpecs reports to.
type failer struct{ failed bool }

// Fail records that a spec failed.
func (f *failer) Fail() { f.failed = true }
