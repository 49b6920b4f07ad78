package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// options are the suite's flags, in the order of their names, as --help
// lists them.
type options struct {
	BaseURL          string        `name:"base-url" placeholder:"URL" help:"URL of the implementation, ending in the contract's base path such as /v1 (required)"`
	APIKey           string        `name:"api-key" placeholder:"KEY" help:"the API KEY, sent as a bearer token (default $$INVENTORY_API_KEY); never printed"`
	APIKeyCommand    string        `name:"api-key-command" placeholder:"COMMAND" help:"shell COMMAND that prints the API key, run at the start and again when the target answers 401 to a key that worked (a key that expires); never printed"`
	Headers          []string      `name:"header" placeholder:"'NAME: VALUE'" help:"extra request header 'NAME: VALUE' sent with every request, such as a tenant or a cookie (repeatable); values never printed"`
	Spec             string        `name:"spec" placeholder:"FILE" help:"OpenAPI FILE of the contract to check (default: the embedded contract)"`
	AllowMutations   bool          `name:"allow-mutations" help:"run the checks that write (each restores what it changed)"`
	PetID            int64         `name:"pet-id" placeholder:"ID" help:"ID of the one record the run may write to (default: the checks write to the first listed, the exploration to any listed)"`
	Strict           bool          `name:"strict" help:"fail on warnings too (what HTTP's RFCs require and the contract does not)"`
	ExploreTime      time.Duration `name:"explore-time" default:"${explore_time}" placeholder:"DURATION" help:"DURATION of stateful exploration (shrinking a failure found takes at most 10s more); 0 turns it off"`
	ExploreSteps     int           `name:"explore-steps" default:"-1" placeholder:"N" help:"N steps of exploration at most besides --explore-time (default: no bound); 0 turns it off"`
	Workers          int           `name:"workers" default:"${workers}" placeholder:"N" help:"N requests in flight at once: exploration workers, each on records of its own, and the read-only checks' requests sent ahead"`
	Seed             uint64        `name:"seed" placeholder:"N" help:"N to replay an exploration exactly (default: random, printed in the summary)"`
	LabelFilter      string        `name:"label-filter" placeholder:"EXPR" help:"run only the checks whose labels match the EXPR, such as 'auth && !concurrency'"`
	List             bool          `name:"list" help:"list the checks and their labels for the contract, and exit"`
	Verbose          bool          `name:"verbose" help:"show every check and every HTTP exchange as it happens"`
	cli.Reports      `embed:""`
	JSONReport       string        `name:"json-report" placeholder:"FILE" help:"write a Ginkgo JSON report to FILE"`
	Timeout          time.Duration `name:"timeout" default:"${timeout}" placeholder:"DURATION" help:"DURATION each request may take; 3 requests in a row without an answer stop the run (exit 2)"`
	MaxRunTime       time.Duration `name:"max-run-time" placeholder:"DURATION" help:"DURATION of the whole run at most, then it stops (exit 2; the reports keep what it found) (default: no bound)"`
	MaxRetryWait     time.Duration `name:"max-retry-wait" default:"${max_retry_wait}" placeholder:"DURATION" help:"DURATION of waiting on 429 answers over the whole run, then a 429 fails its check"`
	MaxResponseBytes int64         `name:"max-response-bytes" type:"size" default:"${max_response_bytes}" placeholder:"SIZE" help:"SIZE cap on the list's decompressed answer (default 16MiB); any other answer (an Error, one record) is capped at 1MiB"`
	MaxRunBytes      int64         `name:"max-run-bytes" type:"size" default:"${max_run_bytes}" placeholder:"SIZE" help:"SIZE cap on all decompressed response bodies of the run (default 2GiB)"`
	CACert           string        `name:"ca-cert" placeholder:"FILE" help:"PEM FILE of extra CA certificates to trust for the target"`
	InsecureTLS      bool          `name:"insecure-skip-verify" help:"do not verify the target's TLS certificate"`
	Version          bool          `name:"version" help:"print the version and exit"`
	HAR              string        `name:"har" placeholder:"FILE" help:"check the traffic recorded in a HAR FILE against the contract instead (--har FILE --help: its flags)"`
}

// suiteParser returns the parser of the suite's flags into o.
func suiteParser(o *options) *cli.Parser {
	return cli.New("inventory-conformance", o, map[string]string{
		"explore_time":       conformance.DefaultExploreTime.String(),
		"workers":            strconv.Itoa(conformance.DefaultWorkers),
		"timeout":            conformance.DefaultTimeout.String(),
		"max_retry_wait":     conformance.DefaultMaxRetryWait.String(),
		"max_response_bytes": strconv.Itoa(conformance.DefaultMaxResponseBytes),
		"max_run_bytes":      strconv.Itoa(conformance.DefaultMaxRunBytes),
		"reports_for":        "",
		"reports_at":         "",
		"reports_of":         "the run",
	}, false)
}

// helpLines renders one line per flag, as --help shows them and the
// README's table lists them.
func helpLines(p *cli.Parser) [][2]string {
	var lines [][2]string
	for _, l := range p.Lines(nil) {
		if l.Default != "" {
			l.Help += " (default " + l.Default + ")"
		}
		lines = append(lines, [2]string{l.Flag, l.Help})
	}
	return append(lines, [2]string{"--help", "show this help"})
}

// usage writes the help: what the command does, each flag on one line,
// the limits and the exit statuses.
func usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: inventory-conformance --base-url URL [flags]\n\n")
	fmt.Fprintf(w, "Checks that a Pet Store Inventory implementation honours the contract: every\n")
	fmt.Fprintf(w, "check read from the contract (--spec), then a stateful exploration of random\n")
	fmt.Fprintf(w, "sequences of calls. Read-only unless --allow-mutations.\n\nFlags:\n")
	for _, l := range helpLines(suiteParser(&options{})) {
		fmt.Fprintf(w, "  %-28s %s\n", l[0], l[1])
	}
	fmt.Fprintf(w, "\nLimits: the list's answer is read up to --max-response-bytes after decompression, any\n")
	fmt.Fprintf(w, "other answer (an Error, one record) up to 1MiB, and the run reads at most --max-run-bytes in all.\n")
	fmt.Fprintf(w, "Memory: the bodies being read at once hold at most twice --max-response-bytes between them,\n")
	fmt.Fprintf(w, "whatever --workers, and a body past its cap keeps only its first 4KiB. A list is indexed where\n")
	fmt.Fprintf(w, "it lies in its body, never decoded into maps: about 17 bytes of memory per byte of the list.\n")
	fmt.Fprintf(w, "So with the default caps a run stays under 256 MB against a target whose list is short, whatever\n")
	fmt.Fprintf(w, "its other answers (gzip bombs, 20 MB errors: about 55 MB), and under 600 MB with the longest\n")
	fmt.Fprintf(w, "list (240,000 pets, a 12 MB list: 417 MB); Go's collector is asked to keep the heap under 400 MiB\n")
	fmt.Fprintf(w, "(GOMEMLIMIT overrides it).\n")
	fmt.Fprintf(w, "Time: waits on 429 stop after --max-retry-wait; the run stops (exit 2, the reports\n")
	fmt.Fprintf(w, "keeping what it found) after --max-run-time, or when 3 requests in a row go unanswered.\n")
	fmt.Fprintf(w, "\nExit status: 0 every check passed; 1 the target broke the contract, or the run's coverage is below\n")
	fmt.Fprintf(w, "--min-coverage; 2 the run could not be made, or stopped before its checks were done (the target\n")
	fmt.Fprintf(w, "gone, --max-run-time, an interrupt).\n")
}

// notHeaders are the headers the suite sets itself.
var notHeaders = map[string]string{
	"Authorization":     "the key goes in --api-key or --api-key-command",
	"Content-Type":      "each request sets its own",
	"Content-Length":    "each request sets its own",
	"Host":              "--base-url names the host",
	"Transfer-Encoding": "each request sets its own",
}

// parseHeaders reads the --header values, "Name: value" each. A mistake
// is said without the value (it may be a secret).
func parseHeaders(values []string) (http.Header, error) {
	var h http.Header
	var bad []string
	for n, v := range values {
		name, value, ok := strings.Cut(v, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		switch {
		case !ok || !httpguts.ValidHeaderFieldName(name): // RFC 9110 section 5.1: a token
			bad = append(bad, fmt.Sprintf("--header number %d: want 'Name: value' with a header name of letters, digits and -", n+1))
		case notHeaders[http.CanonicalHeaderKey(name)] != "":
			bad = append(bad, fmt.Sprintf("--header %s: %s", name, notHeaders[http.CanonicalHeaderKey(name)]))
		case strings.ContainsAny(value, "\r\n\x00"):
			bad = append(bad, fmt.Sprintf("--header %s: the value holds a line break or NUL", name))
		default:
			if h == nil {
				h = http.Header{}
			}
			h.Add(name, value)
		}
	}
	if len(bad) > 0 {
		return nil, errors.New(strings.Join(bad, "; "))
	}
	return h, nil
}

// headerSecrets lists the values of the --header values that read as
// headers as secrets.
func headerSecrets(values []string) []exchange.Secret {
	var out []exchange.Secret
	for _, v := range values {
		if name, value, ok := strings.Cut(v, ":"); ok {
			out = append(out, conformance.HeaderSecret(strings.TrimSpace(name), strings.TrimSpace(value)))
		}
	}
	return out
}
