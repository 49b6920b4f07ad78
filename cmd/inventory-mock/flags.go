package main

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// options are the mock's settings, from flags or the environment.
type options struct {
	addr          string
	apiKeys       keysFlag
	adminKey      adminKeyFlag
	specFile      string
	fixturesFile  string
	generate      int
	seed          uint64
	corsOrigins   originsFlag
	adminOrigins  adminOriginsFlag
	allowedHosts  hostsFlag
	maxConns      int
	shutdownGrace time.Duration
	tlsCert       string
	tlsKey        string
	tlsSelfSigned bool
	tlsCertOut    string
	logFormat     string
	latency       listFlag
	fault         listFlag
	chaosSeed     int64
	maxDelay      time.Duration
	journalSize   int
	journalBody   int
	maxSessions   int
	sessionIdle   time.Duration
	pprofAddr     string
	printFixtures bool
	healthCheck   bool
	version       bool
	store         string
	storeFlag     storeFlag // store, parsed
	proxy         proxyOptions
	staging       stagingOptions

	given map[string]bool // the flags set on the command line or in the environment
}

// envPrefix names the environment variable of each setting: --api-key is
// INVENTORY_MOCK_API_KEYS (comma-separated), --tls-cert
// INVENTORY_MOCK_TLS_CERT.
const envPrefix = "INVENTORY_MOCK_"

// actions are the flags that do something and exit instead of serving:
// they take no environment variable, so a variable left in a container's
// environment cannot turn the mock into a one-shot command.
var actions = []string{"print-fixtures", "health-check", "version"}

// envName returns the environment variable of a flag, or "" for an action.
func envName(flagName string) string {
	for _, a := range actions {
		if a == flagName {
			return ""
		}
	}
	if flagName == "upstream-api-key" {
		return upstreamKeyEnv
	}
	name := envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
	switch flagName {
	case "api-key", "cors-origin", "admin-origin", "allowed-host":
		name += "S"
	}
	return name
}

// flags declares every flag on a new FlagSet.
func flags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("inventory-mock", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	fs.Var(&o.apiKeys, "api-key", "an accepted API `key` (repeat the flag for more; the variable takes a comma-separated list); none given: the development key "+httpapi.DevKey)
	fs.Var(&o.adminKey, "admin-key", "`key` for the admin endpoints under /__admin/; not given: any API key")
	fs.StringVar(&o.specFile, "spec", "", "OpenAPI `file` to serve instead of the embedded contract")
	fs.StringVar(&o.fixturesFile, "fixtures", "", "JSON `file` of records instead of the embedded fixtures")
	fs.IntVar(&o.generate, "generate", 0, "serve `N` generated pets (petIds 1..N) instead of fixtures")
	fs.Uint64Var(&o.seed, "seed", 1, "`seed` for --generate: the same seed gives the same pets on every machine")
	fs.Var(&o.corsOrigins, "cors-origin", "allowed browser `origin` such as http://localhost:3000 (repeatable), with credentials, for the contract's operations; none or *: any origin, without credentials")
	fs.Var(&o.adminOrigins, "admin-origin", "a browser `origin` whose pages may call the admin API under /__admin/ (repeatable); none: only the dashboard the mock serves itself")
	fs.Var(&o.allowedHosts, "allowed-host", "a host `name` /__admin/ answers for, besides localhost, IP addresses and, when listening on every interface, this machine's name (repeatable), such as the service name in a compose file; * for any")
	fs.IntVar(&o.maxConns, "max-connections", defaultMaxConns, "open connections served at most (`N`); past three quarters of it, connections idle for 5 s are closed; at it, one whose request has been arriving for 1 s or more, else the longest idle one")
	fs.DurationVar(&o.shutdownGrace, "shutdown-grace", defaultShutdownGrace, "on SIGTERM or SIGINT, how long the requests in flight may take to finish; those still running then are cut, named in the log (and the proxy's reports), and the exit status stays the run's")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `file` (needs --tls-key)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "private key `file` for --tls-cert")
	fs.BoolVar(&o.tlsSelfSigned, "tls-self-signed", false, "serve HTTPS with a certificate made at start-up for localhost")
	fs.StringVar(&o.tlsCertOut, "tls-cert-out", "", "with --tls-self-signed: write its certificate (PEM) to `file`, for clients to trust (curl --cacert, inventory-conformance --ca-cert)")
	fs.StringVar(&o.store, "store", storeMemory, storeUsage)
	fs.StringVar(&o.logFormat, "log-format", "text", "log `format`: text or json")
	fs.Var(&o.latency, "latency", "add latency: `[OPERATION=]DELAY[-DELAY]`, such as 200ms or updateInventory=50ms-1s (repeatable)")
	fs.Var(&o.fault, "fault", "inject a fault: `[OPERATION=]FAULT[:STATUS][@P]`, FAULT one of status, reset, empty, truncate, slow, such as status:503@0.1 (repeatable)")
	fs.Int64Var(&o.chaosSeed, "chaos-seed", 0, "`seed` of the latency and fault draws, to replay a run; kept when rules are put at run time without one; 0: random, shown by GET /__admin/chaos")
	fs.DurationVar(&o.maxDelay, "max-delay", mockserver.DefaultMaxDelay, "the longest `delay` a Prefer header or a latency rule may ask for")
	fs.IntVar(&o.journalSize, "journal-size", mockserver.DefaultJournalSize, "requests the journal keeps per session (`N`); 0 turns the journal off")
	fs.IntVar(&o.journalBody, "journal-body-limit", mockserver.DefaultJournalBodyLimit, "`bytes` of each request and response body the journal keeps, at least 1 (a list of up to 4 times it is kept whole)")
	fs.IntVar(&o.maxSessions, "max-sessions", store.DefaultMaxSessions, "sessions (X-Mock-Session) kept besides the default (`N`); past it the least recently used is dropped")
	fs.DurationVar(&o.sessionIdle, "session-idle", store.DefaultIdleTimeout, "drop a session unused for this `duration`")
	fs.StringVar(&o.pprofAddr, "pprof", "", "serve Go's profiles at http://`host:port`/debug/pprof/ on a loopback address (off by default)")
	fs.BoolVar(&o.printFixtures, "print-fixtures", false, "print the data set as JSON and exit")
	fs.BoolVar(&o.healthCheck, "health-check", false, "GET /healthz on --addr; exit 0 if it answers 200, else 1, a bad setting included (for container health checks: Docker reserves 2)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	proxyFlags(fs, &o.proxy)
	stagingFlags(fs, &o.staging)
	return fs
}

// usage writes the help.
func usage(w io.Writer) {
	fs := flags(&options{})
	fmt.Fprint(w, `inventory-mock: a stateful mock of the Pet Store Inventory Service.

It serves the contract under /v1 (GET /inventory, PATCH /inventory/{petId}),
checks bearer keys, validates every request against the spec, and keeps
writes. Frontend teams can force answers (Prefer: code=404, example=NAME,
delay=MS), isolate their data (X-Mock-Session: NAME), add latency and faults,
and read a journal of their requests. Also: GET /healthz, GET /openapi.yaml,
and the admin API under /__admin/ (described at /__admin/openapi.yaml).
An operation the spec labels with x-stability (updateInventory is
experimental) answers with that label in an X-Stability header, such as
X-Stability: experimental, and the start-up log lists those operations.
With --proxy-to URL it is a validating proxy in front of a real backend
instead, checking the traffic against the spec (see mockserver/proxy/README.md).

Usage: inventory-mock [flags]

Flags (each setting also read from the environment variable shown; a flag on
the command line wins):
`)
	for _, g := range flagGroups() {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		cli.PrintFlagsOf(w, fs, envName, g.has)
	}
	fmt.Fprintf(w, "  --help\n      show this help\n")
	fmt.Fprint(w, `
Exit status: 0 stopped by SIGINT or SIGTERM, or an action done; 1 --health-check
found the mock unhealthy or could not ask it (a bad setting included), or the
proxy saw violations with --fail-on-violation, or its traffic's coverage is
below --min-coverage; 2 the mock could not start (the message says why).
`)
}

// A flagGroup is a heading of --help and the flags under it.
type flagGroup struct {
	title string
	has   func(name string) bool
}

// flagGroups are the headings of --help: what serves in both modes, HTTPS,
// the mock's own flags (any flag not named elsewhere), the proxy's (those
// proxyFlags declares), and the actions.
func flagGroups() []flagGroup {
	serving := []string{"addr", "api-key", "admin-key", "allowed-host", "max-connections", "shutdown-grace", "spec", "log-format", "pprof"}
	tls := []string{"tls-cert", "tls-key", "tls-self-signed", "tls-cert-out"}
	scratch := flag.NewFlagSet("proxy", flag.ContinueOnError)
	proxyFlags(scratch, &proxyOptions{})
	isProxy := func(name string) bool { return scratch.Lookup(name) != nil }
	in := func(names []string) func(string) bool {
		return func(name string) bool { return slices.Contains(names, name) }
	}
	return []flagGroup{
		{"Serving, the mock and the proxy", in(serving)},
		{"HTTPS, the mock and the proxy", in(tls)},
		{"The mock", func(name string) bool {
			return !slices.Contains(serving, name) && !slices.Contains(tls, name) && !isProxy(name) && !slices.Contains(actions, name)
		}},
		{"The validating proxy (--proxy-to URL)", isProxy},
		{"Actions: they do their job and exit, and take no environment variable", in(actions)},
	}
}

// parse reads args, then fills every setting not given on the command line
// from its environment variable (lookupEnv is os.LookupEnv or one like it),
// and checks the settings together.
func parse(args []string, lookupEnv func(string) (string, bool)) (*options, error) {
	o := &options{given: map[string]bool{}}
	fs := flags(o)
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	if err := cli.FromEnv(fs, lookupEnv, envName); err != nil {
		return nil, err
	}
	fs.Visit(func(f *flag.Flag) { o.given[f.Name] = true })
	for _, name := range []string{"generate", "seed", "api-key"} {
		if v, _ := lookupEnv(envName(name)); v != "" {
			o.given[name] = true
		}
	}
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return nil, cli.Usagef("--tls-cert and --tls-key go together")
	case o.tlsCert != "" && o.tlsSelfSigned:
		return nil, cli.Usagef("--tls-self-signed and --tls-cert exclude each other")
	case o.tlsCertOut != "" && !o.tlsSelfSigned:
		return nil, cli.Usagef("--tls-cert-out writes the certificate of --tls-self-signed; give both")
	case o.given["generate"] && o.generate < 1:
		return nil, cli.Usagef("--generate %d: want at least 1 pet; leave it out to serve the fixtures", o.generate)
	case o.given["seed"] && !o.given["generate"]:
		return nil, cli.Usagef("--seed seeds --generate, which is not given")
	case o.generate > 0 && o.fixturesFile != "":
		return nil, cli.Usagef("--generate and --fixtures exclude each other")
	case o.logFormat != "text" && o.logFormat != "json":
		return nil, cli.Usagef("--log-format %q: want text or json", o.logFormat)
	case o.maxDelay <= 0:
		return nil, cli.Usagef("--max-delay must be positive")
	case o.journalSize < 0:
		return nil, cli.Usagef("--journal-size must not be negative")
	case o.journalBody < 1:
		return nil, cli.Usagef("--journal-body-limit %d: want at least 1 byte; to keep no journal at all, give --journal-size 0", o.journalBody)
	case o.maxSessions < 1 || o.sessionIdle <= 0:
		return nil, cli.Usagef("--max-sessions and --session-idle must be positive")
	case o.maxConns < 1:
		return nil, cli.Usagef("--max-connections %d: want at least 1", o.maxConns)
	case o.shutdownGrace < 0:
		return nil, cli.Usagef("--shutdown-grace %s: want 0 or more", o.shutdownGrace)
	}
	if err := checkAddr("--addr", o.addr); err != nil {
		return nil, err
	}
	var err error
	if o.storeFlag, err = parseStore(o.store); err != nil {
		return nil, cli.Usagef("--store: %v", err)
	}
	if err := o.proxy.check(o); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if err := o.staging.check(o); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return o, nil
}

// A listFlag is a repeatable flag; its environment variable takes a
// comma-separated list (cli.ListValue).
type listFlag []string

func (l *listFlag) String() string { return "" }

// List marks the flag as a list for cli.FromEnv.
func (l *listFlag) List() {}

func (l *listFlag) Set(v string) error {
	if v = strings.TrimSpace(v); v != "" {
		*l = append(*l, v)
	}
	return nil
}

// A keysFlag is the repeatable --api-key: one key each time, taken whole
// (a comma is part of the key). An empty key is refused, on the command
// line and in the variable, set or left empty: it is what --api-key
// "$UNSET_SECRET" gives, and falling back to the published development key
// would serve anyone.
type keysFlag []string

func (k *keysFlag) String() string { return "" }

// List marks the flag as a list for cli.FromEnv.
func (k *keysFlag) List() {}

// NotEmpty makes cli.FromEnv refuse the variable set to "".
func (k *keysFlag) NotEmpty() {}

func (k *keysFlag) Set(v string) error {
	if v = strings.TrimSpace(v); v == "" {
		return errors.New("an empty API key; give a key, or leave the setting out to accept the development key")
	}
	*k = append(*k, v)
	return nil
}

// An adminKeyFlag is --admin-key. Like an API key, it is refused empty:
// an empty admin key would mean "any API key is admin", which a secret
// that did not arrive must not turn on silently.
type adminKeyFlag string

func (a *adminKeyFlag) String() string { return "" } // never the key: help shows no default

// NotEmpty makes cli.FromEnv refuse the variable set to "".
func (a *adminKeyFlag) NotEmpty() {}

func (a *adminKeyFlag) Set(v string) error {
	if v = strings.TrimSpace(v); v == "" {
		return errors.New("an empty admin key; give a key, or leave the setting out to let any API key use /__admin/")
	}
	*a = adminKeyFlag(v)
	return nil
}

// An originsFlag is the repeatable --cors-origin. Each origin is
// normalised to the form browsers send in the Origin header, or refused
// where it cannot match one (mockserver.NormalizeOrigin).
type originsFlag []string

func (o *originsFlag) String() string { return "" }

// List marks the flag as a list for cli.FromEnv.
func (o *originsFlag) List() {}

func (o *originsFlag) Set(v string) error {
	s, err := mockserver.NormalizeOrigin(v)
	if err != nil {
		return err
	}
	*o = append(*o, s)
	return nil
}

// An adminOriginsFlag is the repeatable --admin-origin: origins as
// --cors-origin takes them, but never "*": the admin API is not open to
// every origin.
type adminOriginsFlag []string

func (o *adminOriginsFlag) String() string { return "" }

// List marks the flag as a list for cli.FromEnv.
func (o *adminOriginsFlag) List() {}

func (o *adminOriginsFlag) Set(v string) error {
	s, err := mockserver.NormalizeOrigin(v)
	switch {
	case err != nil:
		return err
	case s == "*":
		return errors.New("the admin API is never open to every origin; name the origin of the page that calls it, such as http://localhost:3000")
	}
	*o = append(*o, s)
	return nil
}

// A hostsFlag is the repeatable --allowed-host: host names, without a
// scheme or a port (httpapi.NormalizeHost).
type hostsFlag []string

func (h *hostsFlag) String() string { return "" }

// List marks the flag as a list for cli.FromEnv.
func (h *hostsFlag) List() {}

func (h *hostsFlag) Set(v string) error {
	s, err := httpapi.NormalizeHost(v)
	if err != nil {
		return err
	}
	*h = append(*h, s)
	return nil
}

// checkAddr checks a host:port flag's value before anything listens on it.
func checkAddr(flagName, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return cli.Usagef("%s %q: want host:port, such as 127.0.0.1:8080 (0.0.0.0:8080 for every interface, :0 for a free port)", flagName, addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return cli.Usagef("%s %q: the port %q is not a number from 0 to 65535", flagName, addr, port)
	}
	return nil
}
