package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/conformance/report"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// options are the command-line flags.
type options struct {
	baseURL, apiKey, specFile     string
	apiKeyCommand                 string
	headers                       headerFlag
	workers                       int
	maxRunTime                    time.Duration
	allowMutations, strict        bool
	petID                         int64
	exploreSteps                  int
	exploreTime                   time.Duration
	seed                          uint64
	labelFilter                   string
	list, verbose, version        bool
	junitReport, jsonReport       string
	markdownReport, htmlReport    string
	minCoverage                   report.Percent
	timeout, maxRetryWait         time.Duration
	maxResponseBytes, maxRunBytes byteFlag
	caCert                        string
	insecureTLS                   bool
}

// flags declares the flags on fs, one line of help each, in the order
// --help lists them.
func flags(fs *flag.FlagSet, o *options) {
	o.maxResponseBytes = conformance.DefaultMaxResponseBytes
	o.maxRunBytes = conformance.DefaultMaxRunBytes
	fs.StringVar(&o.baseURL, "base-url", "", "`URL` of the implementation, ending in the contract's base path such as /v1 (required)")
	fs.StringVar(&o.apiKey, "api-key", "", "the API `KEY`, sent as a bearer token (default $INVENTORY_API_KEY); never printed")
	fs.StringVar(&o.apiKeyCommand, "api-key-command", "", "shell `COMMAND` that prints the API key, run at the start and again when the target answers 401 to a key that worked (a key that expires); never printed")
	fs.Var(&o.headers, "header", "extra request header `'NAME: VALUE'` sent with every request, such as a tenant or a cookie (repeatable); values never printed")
	fs.StringVar(&o.specFile, "spec", "", "OpenAPI `FILE` of the contract to check (default: the embedded contract)")
	fs.BoolVar(&o.allowMutations, "allow-mutations", false, "run the checks that write (each restores what it changed)")
	fs.Int64Var(&o.petID, "pet-id", 0, "`ID` of the one record the run may write to (default: the checks write to the first listed, the exploration to any listed)")
	fs.BoolVar(&o.strict, "strict", false, "fail on warnings too (what HTTP's RFCs require and the contract does not)")
	fs.DurationVar(&o.exploreTime, "explore-time", conformance.DefaultExploreTime, "`DURATION` of stateful exploration (shrinking a failure found takes at most 10s more); 0 turns it off")
	fs.IntVar(&o.exploreSteps, "explore-steps", -1, "`N` steps of exploration at most besides --explore-time (default: no bound); 0 turns it off")
	fs.IntVar(&o.workers, "workers", conformance.DefaultWorkers, "`N` requests in flight at once: exploration workers, each on records of its own, and the read-only checks' requests sent ahead")
	fs.Uint64Var(&o.seed, "seed", 0, "`N` to replay an exploration exactly (default: random, printed in the summary)")
	fs.StringVar(&o.labelFilter, "label-filter", "", "run only the checks whose labels match the `EXPR`, such as 'auth && !concurrency'")
	fs.BoolVar(&o.list, "list", false, "list the checks and their labels for the contract, and exit")
	fs.BoolVar(&o.verbose, "verbose", false, "show every check and every HTTP exchange as it happens")
	fs.StringVar(&o.junitReport, "junit-report", "", "write a JUnit XML report to `FILE`")
	fs.StringVar(&o.jsonReport, "json-report", "", "write a Ginkgo JSON report to `FILE`")
	fs.StringVar(&o.markdownReport, "markdown-report", "", "write a Markdown summary to `FILE` (also appended to $GITHUB_STEP_SUMMARY where it is set)")
	fs.StringVar(&o.htmlReport, "html-report", "", "write the report as one self-contained HTML page to `FILE`")
	fs.Var(&o.minCoverage, "min-coverage", "fail (exit 1) when the run exercises less than `PERCENT` of the documented (operation, status) pairs")
	fs.DurationVar(&o.timeout, "timeout", conformance.DefaultTimeout, "`DURATION` each request may take; 3 requests in a row without an answer stop the run (exit 2)")
	fs.DurationVar(&o.maxRunTime, "max-run-time", 0, "`DURATION` of the whole run at most, then it stops (exit 2; the reports keep what it found) (default: no bound)")
	fs.DurationVar(&o.maxRetryWait, "max-retry-wait", conformance.DefaultMaxRetryWait, "`DURATION` of waiting on 429 answers over the whole run, then a 429 fails its check")
	fs.Var(&o.maxResponseBytes, "max-response-bytes", "`SIZE` cap on one decompressed response body (default 16MiB; 1MiB where one record is expected)")
	fs.Var(&o.maxRunBytes, "max-run-bytes", "`SIZE` cap on all decompressed response bodies of the run (default 2GiB)")
	fs.StringVar(&o.caCert, "ca-cert", "", "PEM `FILE` of extra CA certificates to trust for the target")
	fs.BoolVar(&o.insecureTLS, "insecure-skip-verify", false, "do not verify the target's TLS certificate")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	fs.String("har", "", "check the traffic recorded in a HAR `FILE` against the contract instead (--har FILE --help: its flags)")
}

// helpLines renders one line per flag, as --help shows them and the
// README's table lists them.
func helpLines(fs *flag.FlagSet) [][2]string {
	var lines [][2]string
	fs.VisitAll(func(f *flag.Flag) {
		name, text := flag.UnquoteUsage(f)
		arg := "--" + f.Name
		if name != "" {
			arg += " " + strings.ToUpper(name)
		}
		if d := f.DefValue; d != "" && d != "0" && d != "false" && !strings.Contains(text, "(default") {
			text += " (default " + d + ")"
		}
		lines = append(lines, [2]string{arg, text})
	})
	return append(lines, [2]string{"--help", "show this help"})
}

// usage writes the help: what the command does, each flag on one line,
// the limits and the exit statuses.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: inventory-conformance --base-url URL [flags]\n\n")
	fmt.Fprintf(w, "Checks that a Pet Store Inventory implementation honours the contract: every\n")
	fmt.Fprintf(w, "check read from the contract (--spec), then a stateful exploration of random\n")
	fmt.Fprintf(w, "sequences of calls. Read-only unless --allow-mutations.\n\nFlags:\n")
	for _, l := range helpLines(fs) {
		fmt.Fprintf(w, "  %-28s %s\n", l[0], l[1])
	}
	fmt.Fprintf(w, "\nLimits: each response body is read up to --max-response-bytes after decompression\n")
	fmt.Fprintf(w, "(1MiB where one record is expected) and the run reads at most --max-run-bytes in all.\n")
	fmt.Fprintf(w, "Memory: a list is indexed where it lies in its body, never decoded into maps: about\n")
	fmt.Fprintf(w, "17 bytes of memory per byte of the list, so with the default caps a run stays under\n")
	fmt.Fprintf(w, "about 450 MB whatever the target (a 14 MiB list of 240,000 pets: 422 MB at most);\n")
	fmt.Fprintf(w, "Go's collector is asked to keep the heap under 400 MiB (GOMEMLIMIT overrides it).\n")
	fmt.Fprintf(w, "Time: waits on 429 stop after --max-retry-wait; the run stops (exit 2, the reports\n")
	fmt.Fprintf(w, "keeping what it found) after --max-run-time, or when 3 requests in a row go unanswered.\n")
	fmt.Fprintf(w, "\nExit status: 0 every check passed; 1 the target broke the contract, or the run's coverage is below\n")
	fmt.Fprintf(w, "--min-coverage; 2 the run could not be made, or stopped before its checks were done (the target\n")
	fmt.Fprintf(w, "gone, --max-run-time, an interrupt).\n")
}

// A byteFlag is a size such as 16MiB, 512KiB or 1048576.
type byteFlag int64

func (b *byteFlag) String() string { return strconv.FormatInt(int64(*b), 10) }

// Set reads a size with an optional KiB, MiB or GiB suffix.
func (b *byteFlag) Set(s string) error {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if v, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = v, m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return fmt.Errorf("want a positive size such as 16MiB")
	}
	*b = byteFlag(n * mult)
	return nil
}

// A headerFlag is the --header values, "Name: value" each. Set never
// fails, so that the flag package never prints a value it could not
// read (it may be a secret): check reports the mistake without it.
type headerFlag struct {
	h   http.Header
	bad []string // why each unreadable one is, without its value
}

func (f *headerFlag) String() string { return "" }

// notHeaders are the headers the suite sets itself.
var notHeaders = map[string]string{
	"Authorization":     "the key goes in --api-key or --api-key-command",
	"Content-Type":      "each request sets its own",
	"Content-Length":    "each request sets its own",
	"Host":              "--base-url names the host",
	"Transfer-Encoding": "each request sets its own",
}

// Set reads one header.
func (f *headerFlag) Set(v string) error {
	n := len(f.bad) + len(f.h) + 1
	name, value, ok := strings.Cut(v, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	switch {
	case !ok || !validHeaderName(name):
		f.bad = append(f.bad, fmt.Sprintf("--header number %d: want 'Name: value' with a header name of letters, digits and -", n))
		return nil
	case notHeaders[http.CanonicalHeaderKey(name)] != "":
		f.bad = append(f.bad, fmt.Sprintf("--header %s: %s", name, notHeaders[http.CanonicalHeaderKey(name)]))
		return nil
	case strings.ContainsAny(value, "\r\n\x00"):
		f.bad = append(f.bad, fmt.Sprintf("--header %s: the value holds a line break or NUL", name))
		return nil
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(name, value)
	return nil
}

// check says what was wrong with the headers given, if anything.
func (f *headerFlag) check() error {
	if len(f.bad) > 0 {
		return errors.New(strings.Join(f.bad, "; "))
	}
	return nil
}

// validHeaderName reports whether name is an HTTP field name (RFC 9110
// section 5.1: a token).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
}

// secrets lists the header values as secrets.
func (f *headerFlag) secrets() []exchange.Secret {
	var out []exchange.Secret
	for name, vs := range f.h {
		for _, v := range vs {
			out = append(out, conformance.HeaderSecret(name, v))
		}
	}
	return out
}
