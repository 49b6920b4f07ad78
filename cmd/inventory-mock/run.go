package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

var errHelp = flag.ErrHelp

// options are the mock's settings, from flags or the environment.
type options struct {
	addr          string
	apiKeys       listFlag
	adminKey      string
	specFile      string
	fixturesFile  string
	generate      int
	seed          uint64
	corsOrigins   listFlag
	tlsCert       string
	tlsKey        string
	tlsSelfSigned bool
	logFormat     string
	latency       listFlag
	fault         listFlag
	chaosSeed     int64
	maxDelay      time.Duration
	journalSize   int
	journalBody   int
	maxSessions   int
	sessionIdle   time.Duration
	printFixtures bool
	healthCheck   bool
	version       bool
	proxy         proxyOptions
}

// envPrefix names the environment variable of each flag: --api-key is
// INVENTORY_MOCK_API_KEYS (comma-separated), --tls-cert INVENTORY_MOCK_TLS_CERT.
const envPrefix = "INVENTORY_MOCK_"

func envName(flagName string) string {
	name := envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
	if flagName == "api-key" || flagName == "cors-origin" {
		name += "S"
	}
	return name
}

// parse reads args, then fills every flag not given on the command line from
// its environment variable.
func parse(args []string, getenv func(string) string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("inventory-mock", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	fs.Var(&o.apiKeys, "api-key", "an accepted API `key` (repeatable); none given: the development key "+mockserver.DevKey)
	fs.StringVar(&o.adminKey, "admin-key", "", "`key` for POST /__admin/reset; empty: any API key")
	fs.StringVar(&o.specFile, "spec", "", "OpenAPI `file` to serve instead of the embedded contract")
	fs.StringVar(&o.fixturesFile, "fixtures", "", "JSON `file` of InventoryItem records instead of the embedded fixtures")
	fs.IntVar(&o.generate, "generate", 0, "serve `N` generated pets (petIds 1..N) instead of fixtures")
	fs.Uint64Var(&o.seed, "seed", 1, "`seed` for --generate: the same seed gives the same pets on every machine")
	fs.Var(&o.corsOrigins, "cors-origin", "allowed browser `origin` (repeatable), with credentials; none: any origin, without credentials")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve HTTPS with this certificate `file` (needs --tls-key)")
	fs.StringVar(&o.tlsKey, "tls-key", "", "private key `file` for --tls-cert")
	fs.BoolVar(&o.tlsSelfSigned, "tls-self-signed", false, "serve HTTPS with a certificate made in memory for localhost")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.Var(&o.latency, "latency", "add latency: `[OPERATION=]DELAY[-DELAY]`, such as 200ms or updateInventory=50ms-1s (repeatable)")
	fs.Var(&o.fault, "fault", "inject a fault: `[OPERATION=]FAULT[:STATUS][@P]`, FAULT one of status, reset, empty, truncate, slow, such as status:503@0.1 (repeatable)")
	fs.Int64Var(&o.chaosSeed, "chaos-seed", 0, "`seed` of the latency and fault draws, to replay a run; 0: random, shown in the log")
	fs.DurationVar(&o.maxDelay, "max-delay", mockserver.DefaultMaxDelay, "the longest `delay` a Prefer header or a latency rule may ask for")
	fs.IntVar(&o.journalSize, "journal-size", mockserver.DefaultJournalSize, "requests the journal keeps per session (`N`); 0 turns the journal off")
	fs.IntVar(&o.journalBody, "journal-body-limit", mockserver.DefaultJournalBodyLimit, "`bytes` of each request and response body the journal keeps")
	fs.IntVar(&o.maxSessions, "max-sessions", store.DefaultMaxSessions, "sessions (X-Mock-Session) kept besides the default (`N`); past it the least recently used is dropped")
	fs.DurationVar(&o.sessionIdle, "session-idle", store.DefaultIdleTimeout, "drop a session unused for this `duration`")
	fs.BoolVar(&o.printFixtures, "print-fixtures", false, "print the data set as JSON and exit")
	fs.BoolVar(&o.healthCheck, "health-check", false, "GET /healthz on --addr and exit 0 if it answers 200 (for container health checks)")
	fs.BoolVar(&o.version, "version", false, "print the version and exit")
	proxyFlags(fs, &o.proxy)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `inventory-mock: a stateful mock of the Pet Store Inventory Service.

It serves the contract under /v1 (GET /inventory, PATCH /inventory/{petId}),
checks bearer keys, validates every request against the spec, and keeps
writes in memory. Also: GET /healthz, GET /openapi.yaml, POST /__admin/reset.
With --proxy-to URL it is a validating proxy in front of a real backend instead.

Usage: inventory-mock [flags]

Flags (each also read from the environment variable shown):
`)
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			fmt.Fprintf(fs.Output(), "  --%s %s\n      %s", f.Name, name, usage)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				fmt.Fprintf(fs.Output(), " (default %s)", f.DefValue)
			}
			fmt.Fprintf(fs.Output(), " [$%s]\n", envName(f.Name))
		})
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q; see --help", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v := getenv(envName(f.Name))
		if given[f.Name] || v == "" || err != nil {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = fmt.Errorf("$%s: %v", envName(f.Name), e)
		}
	})
	if err != nil {
		return nil, err
	}
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return nil, errors.New("--tls-cert and --tls-key go together")
	case o.tlsCert != "" && o.tlsSelfSigned:
		return nil, errors.New("--tls-self-signed and --tls-cert exclude each other")
	case o.generate < 0:
		return nil, errors.New("--generate must not be negative")
	case o.generate > 0 && o.fixturesFile != "":
		return nil, errors.New("--generate and --fixtures exclude each other")
	case o.logFormat != "text" && o.logFormat != "json":
		return nil, fmt.Errorf("--log-format %q: want text or json", o.logFormat)
	case o.maxDelay <= 0:
		return nil, errors.New("--max-delay must be positive")
	case o.journalSize < 0 || o.journalBody < 0:
		return nil, errors.New("--journal-size and --journal-body-limit must not be negative")
	case o.maxSessions < 1 || o.sessionIdle <= 0:
		return nil, errors.New("--max-sessions and --session-idle must be positive")
	}
	if err := o.proxy.check(o); err != nil {
		return nil, err
	}
	return o, nil
}

// A listFlag is a repeatable flag; one value may also hold a comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return "" }

func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// run starts the mock and serves until ctx is done. ready, if not nil, is
// called with the listening address once the mock accepts connections.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, ready func(addr string)) error {
	start := time.Now()
	o, err := parse(args, getenv, stderr)
	if err != nil {
		return err
	}
	if o.version {
		fmt.Fprintln(stdout, "inventory-mock", buildVersion())
		return nil
	}
	if o.healthCheck {
		return healthCheck(ctx, o)
	}
	var handler slog.Handler = slog.NewTextHandler(stderr, nil)
	if o.logFormat == "json" {
		handler = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(handler)
	if o.proxy.to != "" {
		return runProxy(ctx, o, getenv, handler, logger, start, ready)
	}
	data, err := load(o)
	if err != nil {
		return err
	}
	if o.printFixtures {
		_, err := stdout.Write(fixtures.Encode(data.records))
		return err
	}
	tuneGC(getenv, len(data.records))
	if len(data.unknown) > 0 {
		logger.Warn("fixtures: fields the record schema does not have are left out",
			"source", data.source, "schema", data.shape.Schema.Name, "fields", strings.Join(data.unknown, ", "))
	}
	if len(o.apiKeys) == 0 {
		logger.Warn("no API key configured: accepting the development key (see README, Authentication)")
	}
	chaos, err := chaosOf(o)
	if err != nil {
		return err
	}
	mock, err := mockserver.New(mockserver.Config{
		Contract:         data.contract,
		Shape:            data.shape,
		Records:          data.records,
		Sessions:         store.Options{MaxSessions: o.maxSessions, IdleTimeout: o.sessionIdle},
		APIKeys:          o.apiKeys,
		AdminKey:         o.adminKey,
		CORSOrigins:      o.corsOrigins,
		Logger:           logger,
		MaxDelay:         o.maxDelay,
		Chaos:            chaos,
		JournalSize:      o.journalSize,
		JournalBodyLimit: o.journalBody,
	})
	if err != nil {
		return err
	}
	if c := mock.Chaos(); len(c.Rules) > 0 {
		logger.Warn("chaos rules in force: latency and faults are added on purpose", "rules", len(c.Rules), "chaos_seed", c.Seed)
	}
	defer mock.Close()
	for _, w := range mock.Warnings() {
		logger.Warn("operation not served as the contract describes it", "detail", w)
	}
	for _, op := range data.contract.Operations {
		if op.Stability != "" {
			logger.Info("operation is "+op.Stability, "operation", op.Name(), "header", mockserver.StabilityHeader+": "+op.Stability)
		}
	}

	return serve(ctx, o, mock, handler, ready, func(url string) {
		logger.Info("listening",
			"url", url+data.contract.BasePath,
			"records", len(data.records),
			"source", data.source,
			"startup", time.Since(start).Round(time.Microsecond),
			"version", buildVersion())
	})
}

// serve listens on o.addr, with TLS as o says, and serves h until ctx is
// done, then shuts down gracefully: requests in flight finish. listening
// gets the server's URL once it accepts connections, and ready, if not
// nil, its address.
func serve(ctx context.Context, o *options, h http.Handler, logs slog.Handler, ready func(addr string), listening func(url string)) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logs, slog.LevelWarn),
	}
	scheme := "http"
	if o.tlsCert != "" || o.tlsSelfSigned {
		scheme = "https"
		var err error
		if srv.TLSConfig, err = tlsConfig(o); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	if srv.TLSConfig != nil {
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	addr := ln.Addr().String()
	listening(scheme + "://" + addr)
	if ready != nil {
		ready(addr)
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.New(logs).Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdownCtx)
}

// chaosOf reads the --latency and --fault rules.
func chaosOf(o *options) (mockserver.Chaos, error) {
	c := mockserver.Chaos{Seed: o.chaosSeed}
	for _, v := range o.latency {
		r, err := mockserver.ParseLatencyFlag(v)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, r)
	}
	for _, v := range o.fault {
		r, err := mockserver.ParseFaultFlag(v)
		if err != nil {
			return c, err
		}
		c.Rules = append(c.Rules, r)
	}
	return c, nil
}

// data is what the mock serves: the contract, what a record is, and the
// records, checked against the one set of rules.
type data struct {
	contract *spec.Contract
	shape    *fixtures.Shape
	records  []fixtures.Record
	source   string   // where the records came from, for messages
	unknown  []string // fixture fields the record schema does not have, left out
}

// load reads the contract and the data set the options name. Every data
// source, embedded, a file or generated, is checked against the record
// schema and the mock's own bounds; a failure names the source.
func load(o *options) (*data, error) {
	doc := spec.Document
	if o.specFile != "" {
		var err error
		if doc, err = os.ReadFile(o.specFile); err != nil {
			return nil, err
		}
	}
	contract, err := spec.Load(doc)
	if err != nil {
		return nil, err
	}
	shape, err := fixtures.NewShape(contract)
	if err != nil {
		return nil, err
	}
	d := &data{contract: contract, shape: shape}
	switch {
	case o.generate > 0:
		d.source = fmt.Sprintf("generated (%d pets, seed %d)", o.generate, o.seed)
		d.records, err = fixtures.Generate(shape, o.generate, o.seed)
	case o.fixturesFile != "":
		d.source = o.fixturesFile
		var raw []byte
		if raw, err = os.ReadFile(o.fixturesFile); err == nil {
			d.records, d.unknown, err = fixtures.Load(o.fixturesFile, raw, shape)
		}
	default:
		d.source = fixtures.DefaultName + " (embedded)"
		d.records, d.unknown, err = fixtures.Default(shape)
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// tlsConfig loads the certificate pair, or makes a self-signed one.
func tlsConfig(o *options) (*tls.Config, error) {
	var cert tls.Certificate
	var err error
	if o.tlsSelfSigned {
		cert, err = selfSigned()
	} else {
		cert, err = tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	}
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}}, nil
}

// selfSigned makes an ECDSA certificate for localhost, 127.0.0.1 and ::1,
// valid for a week, held only in memory.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "inventory-mock (self-signed)"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// buildVersion is the version set at build time, else the module version.
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// healthCheck asks a running mock at o.addr for /healthz. An image without a
// shell or curl uses it as its health check.
func healthCheck(ctx context.Context, o *options) error {
	scheme := "http"
	client := &http.Client{Timeout: 2 * time.Second}
	if o.tlsCert != "" || o.tlsSelfSigned {
		scheme = "https"
		// The check talks to this very process's certificate on loopback.
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	}
	host, port, err := net.SplitHostPort(o.addr)
	if err != nil {
		return err
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	req, err := http.NewRequestWithContext(ctx, "GET", scheme+"://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check: status %d", resp.StatusCode)
	}
	return nil
}

// smallDataSet is the largest number of pets for which tuneGC trades memory
// for speed.
const smallDataSet = 100_000

// tuneGC lets the heap grow to five times the live data before a
// collection (GOGC=400) when the data set is small: the live heap is then a
// few MiB, and request validation allocates enough that collections cost
// the mock a third of its time under load. Resident memory grows by about
// 10 MiB. A GOGC set by the user, or a large data set, keeps Go's default.
func tuneGC(getenv func(string) string, pets int) {
	if getenv("GOGC") == "" && pets <= smallDataSet {
		debug.SetGCPercent(400)
	}
}
