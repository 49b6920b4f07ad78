package main

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/cmd/inventory-mock/mcp"
	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/metrics"
	"github.com/petstore/inventory-kit/mockserver/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// logWindow is how long access lines wait, to reach stderr together (see
// httpapi.NewBatchingLogger): under load, one write per request costs
// more than the line itself; a person watching the log does not see 20 ms.
const logWindow = 20 * time.Millisecond

// run is a cli.Run.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error {
	return runReady(ctx, args, lookupEnv, os.Stdin, stdout, stderr, nil)
}

// runReady is run; ready, if not nil, is called with the listening address
// once the server accepts connections. With --mcp, the MCP server reads
// stdin and writes stdout.
func runReady(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdin io.Reader, stdout, stderr io.Writer, ready func(addr string)) error {
	begin := time.Now()
	o, err := parse(args, lookupEnv)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return err
	}
	if err != nil {
		if healthCheckAsked(args) {
			// A container's health check must not exit 2, which
			// Docker reserves: a bad setting is "unhealthy" too.
			return unhealthy(err)
		}
		return err
	}
	if o.Version {
		fmt.Fprintln(stdout, "inventory-mock", cli.Version(version))
		return nil
	}
	if o.HealthCheck {
		return healthCheck(ctx, o)
	}
	logger, flushLogs := httpapi.NewBatchingLogger(stderr, o.LogFormat == "json", logWindow)
	defer flushLogs()
	if o.Staging.Metrics {
		o.Staging.m = metrics.New()
	}
	if o.Proxy.To != "" {
		return runProxy(ctx, o, lookupEnv, stdout, logger, begin, ready)
	}
	data, err := load(ctx, o)
	if err != nil {
		return err
	}
	if o.PrintFixtures {
		_, err := stdout.Write(fixtures.Encode(data.records))
		return err
	}
	tuneGC(lookupEnv, len(data.records), recordBytes(data.records))
	if len(data.unknown) > 0 {
		logger.Warn("fixtures: fields the record schema does not have are left out",
			"source", data.source, "schema", data.shape.Schema.Name, "fields", strings.Join(data.unknown, ", "))
	}
	chaos, err := chaosOf(o)
	if err != nil {
		return err
	}
	sessions := store.Options{MaxSessions: o.MaxSessions, IdleTimeout: o.SessionIdle}
	st, err := openStore(ctx, o.storeFlag, data, sessions, logger)
	if err != nil {
		return err
	}
	// The store keeps its own copy of the records: the ones loaded, and
	// what loading them left, go back to the system.
	pets := len(data.records)
	data.records = nil
	settle(pets)
	mock, err := mockserver.New(mockserver.Config{
		Contract:         data.contract,
		Shape:            data.shape,
		Store:            st,
		Sessions:         sessions,
		APIKeys:          o.APIKeys,
		AdminKey:         string(o.AdminKey),
		CORSOrigins:      o.CORSOrigins,
		AdminOrigins:     o.AdminOrigins,
		RequireSession:   o.RequireSession,
		AllowedHosts:     adminHosts(o),
		Logger:           logger,
		MaxDelay:         o.MaxDelay,
		Chaos:            chaos,
		JournalSize:      o.JournalSize,
		JournalBodyLimit: o.JournalBody,
		RateLimit:        o.Staging.limit,
		Metrics:          o.Staging.m,
		Reloadable:       o.Staging.Watch,
		MCP:              mcp.Handler(cli.Version(version)),
	})
	if err != nil {
		st.Close()
		return chaosFlagError(o, err)
	}
	if c := mock.Chaos(); len(c.Rules) > 0 {
		logger.Warn("chaos rules in force: latency and faults are added on purpose", "rules", len(c.Rules), "chaos_seed", c.Seed)
	}
	defer mock.Close()
	for _, w := range mock.Warnings() {
		logger.Warn("operation not served as the contract describes it", "detail", w)
	}
	for _, n := range mock.Notes() {
		logger.Info("operation answered as its default response allows", "detail", n)
	}
	for _, op := range data.contract.Operations {
		if op.Stability != "" {
			logger.Info("operation is "+op.Stability, "operation", op.Name(), "header", mockserver.StabilityHeader+": "+op.Stability)
		}
	}
	if rl := mock.RateLimit(); rl.Rate != "" {
		logger.Info("rate limit in force", "limit", rl.String())
	}
	if o.MCP {
		var stop func()
		ctx, stop = serveMCP(ctx, mock, stdin, stdout, logger)
		defer stop()
	}
	if o.Staging.Watch {
		stop, err := watchSpec(ctx, o.Spec, o.SpecRefsOutside, mock, o.Staging.m, logger)
		if err != nil {
			return err
		}
		defer stop()
	}

	_, err = serve(ctx, o, mock, logger, ready, func(url string) {
		// Said once the mock listens, so that it never comes before a
		// refusal of the settings, whose message must be the last line.
		if len(o.APIKeys) == 0 {
			logger.Warn("no API key configured: accepting the published development key; fine on your own machine, where /__admin/ answers only its own dashboard, by loopback names and IP addresses (see mockserver/README.md, Security)")
		}
		logger.Info("listening",
			"url", url+data.contract.BasePath,
			"dashboard", url+"/__admin/",
			"records", pets,
			"source", data.source,
			"store", o.storeFlag.safe,
			"cors", corsSummary(o),
			"startup", time.Since(begin).Round(time.Microsecond),
			"version", cli.Version(version))
	})
	return err
}

// serve listens on o.addr, with TLS as o says, and serves h until ctx is
// done, then shuts down gracefully: requests in flight finish, for
// --shutdown-grace at most; those still in flight then are cut, logged
// and returned, and the stop is no error, so the exit status stays the
// run's. listening gets the server's URL once it accepts connections, and
// ready, if not nil, its address.
func serve(ctx context.Context, o *options, h http.Handler, logger *slog.Logger, ready func(addr string), listening func(url string)) (cut []cutRequest, err error) {
	if o.Pprof != "" {
		stopPprof, err := servePprof(o.Pprof, os.Args, logger)
		if err != nil {
			return nil, err
		}
		defer stopPprof()
	}
	if o.Staging.MetricsAddr != "" && o.Staging.m != nil {
		stopMetrics, err := serveMetrics(o.Staging.MetricsAddr, o.Staging.m, logger)
		if err != nil {
			return nil, err
		}
		defer stopMetrics()
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout(o.MaxDelay),
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	var cert []byte // the self-signed certificate, PEM, for --tls-cert-out
	if o.TLSCert != "" || o.TLSSelfSigned {
		scheme = "https"
		if srv.TLSConfig, cert, err = tlsConfig(o); err != nil {
			return nil, err
		}
		// A file left by an earlier run would pass for this run's
		// certificate: --tls-cert-out appears only once the mock listens.
		if err := removeStale(o.TLSCertOut); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, listenError("--addr", o.Addr, err)
	}
	conns := limitConns(ln, o.MaxConns)
	flights := newInFlight()
	srv.ConnState, srv.ConnContext, srv.Handler = conns.track, connContext, conns.serving(flights, h)
	ln = conns
	if srv.TLSConfig != nil {
		ln = tls.NewListener(plainHTTPListener{ln}, srv.TLSConfig)
		if o.TLSCertOut != "" {
			if err := writeAtomically(o.TLSCertOut, cert); err != nil {
				ln.Close()
				return nil, fmt.Errorf("--tls-cert-out: %w", err)
			}
			logger.Info("wrote the self-signed certificate; trust it with curl --cacert FILE or inventory-conformance --ca-cert FILE", "file", o.TLSCertOut)
		}
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
		return nil, err
	case <-ctx.Done():
	}
	logger.Info("shutting down: finishing the requests in flight", "grace", o.ShutdownGrace)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), o.ShutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	cut = flights.list()
	for _, c := range cut {
		logger.Warn("request cut at shutdown: still in flight after --shutdown-grace", "method", c.Method, "path", c.Path, "ran", c.Ran.Round(time.Millisecond), "grace", o.ShutdownGrace)
	}
	srv.Close()
	flights.wait(afterCut)
	return cut, nil
}

// writeTimeout is the server's write timeout: a minute, or longer where
// --max-delay lets a client ask for a longer wait, with room for a slow
// body after it. A shorter one would cut the answer the client asked for.
func writeTimeout(maxDelay time.Duration) time.Duration {
	return max(60*time.Second, maxDelay+30*time.Second)
}

// listenError says why the mock could not listen on addr, naming the flag
// that gave it and what to do.
func listenError(flagName, addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("%s %s: the port is in use (another inventory-mock?); stop what listens there, or give another port (%s 127.0.0.1:0 picks a free one)", flagName, addr, flagName)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("%s %s: not allowed to listen there (a port below 1024 needs privileges); give a port above 1023, such as 8080", flagName, addr)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return fmt.Errorf("%s %s: this machine has no such address; give one of its own, 127.0.0.1 for this machine only, or 0.0.0.0 for every interface", flagName, addr)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("%s %s: the host name does not resolve (%s); give an address such as 127.0.0.1", flagName, addr, dns.Err)
	}
	return fmt.Errorf("%s %s: %w", flagName, addr, err)
}

// chaosFlagError names the --latency or --fault flag that gave a chaos
// rule the mock cannot put in force (mockserver.RuleError); other errors
// pass as they are.
func chaosFlagError(o *options, err error) error {
	var re *mockserver.RuleError
	if !errors.As(err, &re) {
		return err
	}
	i := re.Rule - 1
	switch {
	case i >= 0 && i < len(o.Latency):
		// The rule's own message quotes the delay the flag gave: the
		// flag's value is quoted once, in front.
		msg := re.Err.Error()
		if r, err := mockserver.ParseLatencyFlag(o.Latency[i]); err == nil {
			msg = strings.TrimPrefix(msg, fmt.Sprintf("latency %q: ", r.Latency))
		}
		return cli.Usagef("--latency %q: %s", o.Latency[i], msg)
	case i >= len(o.Latency) && i < len(o.Latency)+len(o.Fault):
		return cli.Usagef("--fault %q: %v", o.Fault[i-len(o.Latency)], re.Err)
	}
	return err
}
