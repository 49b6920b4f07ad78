package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/proxy"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// options are the mock's settings: its flags, each with its environment
// variable (cli.Parser reads both), and what parse derives from them.
// Actions, the flags that do something and exit instead of serving, take
// no variable, so that one left in a container's environment cannot turn
// the mock into a one-shot command.
type options struct {
	Addr            string        `name:"addr" env:"INVENTORY_MOCK_ADDR" group:"serving" default:"127.0.0.1:8080" placeholder:"HOST:PORT" help:"host:port to listen on"`
	APIKeys         []string      `name:"api-key" env:"INVENTORY_MOCK_API_KEYS" group:"serving" notempty:"" type:"apikey" placeholder:"KEY" help:"an accepted API key (repeat the flag for more; the variable takes a comma-separated list); none given: the development key ${dev_key}"`
	AdminKey        string        `name:"admin-key" env:"INVENTORY_MOCK_ADMIN_KEY" group:"serving" notempty:"" type:"adminkey" placeholder:"KEY" help:"key for the admin endpoints under /__admin/; not given: any API key"`
	AllowedHosts    []string      `name:"allowed-host" env:"INVENTORY_MOCK_ALLOWED_HOSTS" group:"serving" type:"host" placeholder:"NAME" help:"a host name /__admin/ answers for, besides localhost, IP addresses and, when listening on every interface, this machine's name (repeatable), such as the service name in a compose file; * for any"`
	MaxConns        int           `name:"max-connections" env:"INVENTORY_MOCK_MAX_CONNECTIONS" group:"serving" default:"${max_conns}" placeholder:"N" help:"open connections served at most (N); past three quarters of it, connections idle for 5 s are closed; at it, one whose request has been arriving for 1 s or more, else the longest idle one"`
	ShutdownGrace   time.Duration `name:"shutdown-grace" env:"INVENTORY_MOCK_SHUTDOWN_GRACE" group:"serving" default:"${shutdown_grace}" placeholder:"DURATION" help:"on SIGTERM or SIGINT, how long the requests in flight may take to finish; those still running then are cut, named in the log (and the proxy's reports), and the exit status stays the run's"`
	Spec            string        `name:"spec" env:"INVENTORY_MOCK_SPEC" group:"serving" placeholder:"FILE" help:"OpenAPI file to serve instead of the embedded contract; the files its $refs name must be in its folder or below"`
	SpecRefsOutside bool          `name:"spec-refs-outside" env:"INVENTORY_MOCK_SPEC_REFS_OUTSIDE" group:"serving" help:"let the spec's $refs name files outside its folder, which /openapi.yaml then serves bundled in"`
	LogFormat       string        `name:"log-format" env:"INVENTORY_MOCK_LOG_FORMAT" group:"serving" default:"text" enum:"text,json" placeholder:"FORMAT" help:"log format: text or json"`
	Pprof           string        `name:"pprof" env:"INVENTORY_MOCK_PPROF" group:"serving" placeholder:"HOST:PORT" help:"serve Go's profiles at http://host:port/debug/pprof/ on a loopback address (off by default)"`
	TLSCert         string        `name:"tls-cert" env:"INVENTORY_MOCK_TLS_CERT" group:"tls" placeholder:"FILE" help:"serve HTTPS with this certificate file (needs --tls-key)"`
	TLSKey          string        `name:"tls-key" env:"INVENTORY_MOCK_TLS_KEY" group:"tls" placeholder:"FILE" help:"private key file for --tls-cert"`
	TLSSelfSigned   bool          `name:"tls-self-signed" env:"INVENTORY_MOCK_TLS_SELF_SIGNED" group:"tls" help:"serve HTTPS with a certificate made at start-up for localhost"`
	TLSCertOut      string        `name:"tls-cert-out" env:"INVENTORY_MOCK_TLS_CERT_OUT" group:"tls" placeholder:"FILE" help:"with --tls-self-signed: write its certificate (PEM) to file, for clients to trust (curl --cacert, inventory-conformance --ca-cert)"`
	Fixtures        string        `name:"fixtures" env:"INVENTORY_MOCK_FIXTURES" placeholder:"FILE" help:"JSON file of records instead of the embedded fixtures"`
	Generate        int           `name:"generate" env:"INVENTORY_MOCK_GENERATE" placeholder:"N" help:"serve N generated pets (petIds 1..N) instead of fixtures"`
	Seed            uint64        `name:"seed" env:"INVENTORY_MOCK_SEED" default:"1" placeholder:"SEED" help:"seed for --generate: the same seed gives the same pets on every machine"`
	CORSOrigins     []string      `name:"cors-origin" env:"INVENTORY_MOCK_CORS_ORIGINS" type:"origin" placeholder:"ORIGIN" help:"allowed browser origin such as http://localhost:3000 (repeatable), with credentials, for the contract's operations; none or *: any origin, without credentials"`
	AdminOrigins    []string      `name:"admin-origin" env:"INVENTORY_MOCK_ADMIN_ORIGINS" type:"adminorigin" placeholder:"ORIGIN" help:"a browser origin whose pages may call the admin API under /__admin/ (repeatable); none: only the dashboard the mock serves itself"`
	Store           string        `name:"store" env:"INVENTORY_MOCK_STORE" default:"memory" placeholder:"STORE" help:"keep state in STORE: memory; file:PATH, which survives restarts; or redis://[:PASSWORD@]HOST:PORT/DB, shared by replicas (see mockserver/store/README.md)"`
	Latency         []string      `name:"latency" env:"INVENTORY_MOCK_LATENCY" placeholder:"[OPERATION=]DELAY[-DELAY]" help:"add latency: [OPERATION=]DELAY[-DELAY], such as 200ms or updateInventory=50ms-1s (repeatable)"`
	Fault           []string      `name:"fault" env:"INVENTORY_MOCK_FAULT" placeholder:"[OPERATION=]FAULT[:STATUS][@P]" help:"inject a fault: [OPERATION=]FAULT[:STATUS][@P], FAULT one of status, reset, empty, truncate, slow, such as status:503@0.1 (repeatable)"`
	ChaosSeed       int64         `name:"chaos-seed" env:"INVENTORY_MOCK_CHAOS_SEED" placeholder:"SEED" help:"seed of the latency and fault draws, to replay a run; kept when rules are put at run time without one; 0: random, shown by GET /__admin/chaos"`
	MaxDelay        time.Duration `name:"max-delay" env:"INVENTORY_MOCK_MAX_DELAY" default:"${max_delay}" placeholder:"DELAY" help:"the longest delay a Prefer header or a latency rule may ask for"`
	JournalSize     int           `name:"journal-size" env:"INVENTORY_MOCK_JOURNAL_SIZE" default:"${journal_size}" placeholder:"N" help:"requests the journal keeps per session (N); 0 turns the journal off"`
	JournalBody     int           `name:"journal-body-limit" env:"INVENTORY_MOCK_JOURNAL_BODY_LIMIT" default:"${journal_body}" placeholder:"BYTES" help:"bytes of each request and response body the journal keeps, at least 1 (a list of up to 4 times it is kept whole)"`
	MaxSessions     int           `name:"max-sessions" env:"INVENTORY_MOCK_MAX_SESSIONS" default:"${max_sessions}" placeholder:"N" help:"sessions (mock-session cookie, X-Mock-Session header or mock-session query parameter) kept besides the default, with their own chaos rules and rate limits (N); past it the least recently used is dropped"`
	RequireSession  bool          `name:"require-session" env:"INVENTORY_MOCK_REQUIRE_SESSION" help:"refuse with 400 a request of the contract that names no session (mock-session cookie, X-Mock-Session header or mock-session query parameter), so that no test writes into the default session by mistake; /healthz and /__admin/ are not affected"`
	SessionIdle     time.Duration `name:"session-idle" env:"INVENTORY_MOCK_SESSION_IDLE" default:"${session_idle}" placeholder:"DURATION" help:"drop a session unused for this duration"`
	MCP             bool          `name:"mcp" env:"INVENTORY_MOCK_MCP" help:"also speak the Model Context Protocol on stdin and stdout, for an editor that starts the mock (logs stay on stderr; the mock stops when stdin ends); /__admin/mcp serves it over HTTP either way"`
	PrintFixtures   bool          `name:"print-fixtures" group:"actions" help:"print the data set as JSON and exit"`
	HealthCheck     bool          `name:"health-check" group:"actions" help:"GET /healthz on --addr; exit 0 if it answers 200, else 1, a bad setting included (for container health checks: Docker reserves 2)"`
	Version         bool          `name:"version" group:"actions" help:"print the version and exit"`

	Proxy   proxyOptions   `embed:"" group:"proxy"`
	Staging stagingOptions `embed:""`

	storeFlag storeFlag       // Store, parsed
	given     map[string]bool // the flags set on the command line; --generate, --seed and --api-key also in the environment
}

// newParser returns the parser of the mock's flags into o.
func newParser(o *options) *cli.Parser {
	return cli.New("inventory-mock", o, map[string]string{
		"dev_key":          httpapi.DevKey,
		"max_conns":        strconv.Itoa(defaultMaxConns),
		"max_delay":        mockserver.DefaultMaxDelay.String(),
		"journal_size":     strconv.Itoa(mockserver.DefaultJournalSize),
		"journal_body":     strconv.Itoa(mockserver.DefaultJournalBodyLimit),
		"max_sessions":     strconv.Itoa(store.DefaultMaxSessions),
		"session_idle":     store.DefaultIdleTimeout.String(),
		"shutdown_grace":   defaultShutdownGrace.String(),
		"fixtures_timeout": defaultFixturesTimeout.String(),
		"body_limit":       strconv.Itoa(proxy.DefaultBodyLimit),
		"timeout":          proxy.DefaultTimeout.String(),
		"reports_for":      "proxy: ",
		"reports_at":       " at shutdown",
		"reports_of":       "the traffic",
	}, true)
}

func init() {
	// A key is taken whole (a comma is part of it), and refused empty, set
	// or left empty: it is what --api-key "$UNSET_SECRET" gives, and the
	// published development key would serve anyone; an empty admin key
	// would make any API key admin.
	key := func(empty string) cli.Check {
		return func(v string) (any, error) {
			if v = strings.TrimSpace(v); v == "" {
				return nil, errors.New(empty)
			}
			return v, nil
		}
	}
	cli.NamedTypes["apikey"] = key("an empty API key; give a key, or leave the setting out to accept the development key")
	cli.NamedTypes["adminkey"] = key("an empty admin key; give a key, or leave the setting out to let any API key use /__admin/")
	cli.NamedTypes["upstreamkey"] = key("an empty key; give the backend's API key, or leave the setting out")
	// Origins as browsers send them in the Origin header
	// (mockserver.NormalizeOrigin); the admin API's never "*".
	cli.NamedTypes["origin"] = func(v string) (any, error) { return mockserver.NormalizeOrigin(v) }
	cli.NamedTypes["adminorigin"] = func(v string) (any, error) {
		s, err := mockserver.NormalizeOrigin(v)
		if err == nil && s == "*" {
			err = errors.New("the admin API is never open to every origin; name the origin of the page that calls it, such as http://localhost:3000")
		}
		return s, err
	}
	// Host names, without a scheme or a port (httpapi.NormalizeHost).
	cli.NamedTypes["host"] = func(v string) (any, error) { return httpapi.NormalizeHost(v) }
}

// usage writes the help.
func usage(w io.Writer) {
	p := newParser(&options{})
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
	for _, g := range []struct{ key, title string }{
		{"serving", "Serving, the mock and the proxy"},
		{"tls", "HTTPS, the mock and the proxy"},
		{"", "The mock"},
		{"proxy", "The validating proxy (--proxy-to URL)"},
		{"actions", "Actions: they do their job and exit, and take no environment variable"},
	} {
		fmt.Fprintf(w, "\n%s:\n", g.title)
		cli.PrintFlags(w, p.Lines(func(_, group string) bool { return group == g.key }))
	}
	fmt.Fprintf(w, "  --help\n      show this help\n")
	fmt.Fprint(w, `
Exit status: 0 stopped by SIGINT or SIGTERM, or an action done; 1 --health-check
found the mock unhealthy or could not ask it (a bad setting included), or the
proxy saw violations with --fail-on-violation, or its traffic's coverage is
below --min-coverage; 2 the mock could not start (the message says why).
`)
}

// parse reads args, then fills every setting not given on the command line
// from its environment variable (lookupEnv is os.LookupEnv or one like it),
// and checks the settings together.
func parse(args []string, lookupEnv func(string) (string, bool)) (*options, error) {
	o := &options{given: map[string]bool{}}
	p := newParser(o)
	if err := p.Parse(args, lookupEnv); err != nil {
		return nil, err
	}
	for _, name := range []string{"store", "upstream-api-key"} {
		o.given[name] = p.Given(name)
	}
	for _, name := range []string{"generate", "seed", "api-key"} {
		o.given[name] = p.Given(name) || p.FromEnv(name)
	}
	switch {
	case (o.TLSCert == "") != (o.TLSKey == ""):
		return nil, cli.Usagef("--tls-cert and --tls-key go together")
	case o.TLSCert != "" && o.TLSSelfSigned:
		return nil, cli.Usagef("--tls-self-signed and --tls-cert exclude each other")
	case o.TLSCertOut != "" && !o.TLSSelfSigned:
		return nil, cli.Usagef("--tls-cert-out writes the certificate of --tls-self-signed; give both")
	case o.given["generate"] && o.Generate < 1:
		return nil, cli.Usagef("--generate %d: want at least 1 pet; leave it out to serve the fixtures", o.Generate)
	case o.given["seed"] && !o.given["generate"]:
		return nil, cli.Usagef("--seed seeds --generate, which is not given")
	case o.Generate > 0 && o.Fixtures != "":
		return nil, cli.Usagef("--generate and --fixtures exclude each other")
	case o.MaxDelay <= 0:
		return nil, cli.Usagef("--max-delay must be positive")
	case o.JournalSize < 0:
		return nil, cli.Usagef("--journal-size must not be negative")
	case o.JournalBody < 1:
		return nil, cli.Usagef("--journal-body-limit %d: want at least 1 byte; to keep no journal at all, give --journal-size 0", o.JournalBody)
	case o.MaxSessions < 1 || o.SessionIdle <= 0:
		return nil, cli.Usagef("--max-sessions and --session-idle must be positive")
	case o.ShutdownGrace < 0:
		return nil, cli.Usagef("--shutdown-grace %s: want 0 or more", o.ShutdownGrace)
	case o.MaxConns < 1:
		return nil, cli.Usagef("--max-connections %d: want at least 1", o.MaxConns)
	case o.MCP && o.Proxy.To != "":
		return nil, cli.Usagef("--mcp serves the mock's tools (records, sessions, faults, the journal); the validating proxy (--proxy-to) has none")
	}
	if err := checkAddr("--addr", o.Addr); err != nil {
		return nil, err
	}
	var err error
	if o.storeFlag, err = parseStore(o.Store); err != nil {
		return nil, cli.Usagef("--store: %v", err)
	}
	if err := o.Proxy.check(o); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	if err := o.Staging.check(o); err != nil {
		return nil, cli.Usagef("%v", err)
	}
	return o, nil
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
