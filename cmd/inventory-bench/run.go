package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

// options are the settings of one run: the bench's flags (it reads no
// environment variable) and the scenarios they name.
type options struct {
	Mock        string        `name:"mock" placeholder:"BINARY" help:"inventory-mock binary to measure; empty: go build ./cmd/inventory-mock into a temporary directory"`
	Against     string        `name:"against" placeholder:"BINARY" help:"another inventory-mock binary (an older build, say) to measure the mock against, instead of the bare baseline"`
	Names       string        `name:"scenarios" default:"all" placeholder:"LIST" help:"comma-separated list of scenarios: ${scenarios}, or all"`
	Duration    time.Duration `name:"duration" default:"2s" help:"length of one round against one server"`
	Warmup      time.Duration `name:"warmup" default:"300ms" help:"load on each server before the first round of a scenario, not measured"`
	Rounds      int           `name:"rounds" default:"5" help:"rounds per server and scenario, alternating mock and baseline"`
	Clients     int           `name:"clients" default:"32" help:"concurrent clients, each on its own keep-alive connection"`
	RedisFsync  string        `name:"redis-appendfsync" default:"always" enum:"always,everysec,no" placeholder:"POLICY" help:"appendfsync policy of the redis scenarios' redis-server: always (no acknowledged write lost if Redis crashes), everysec or no"`
	StartupRuns int           `name:"startup-runs" default:"5" help:"starts of the mock per start-up figure (the one with 1,000,000 pets runs at most 3 times)"`
	Version     bool          `name:"version" help:"print the version and exit"`

	scenarios []string // Names, read
}

// help is the help above the flags.
const help = `inventory-bench: measures inventory-mock against a baseline on this machine.

Both run as child processes with the same client, concurrency and duration;
rounds alternate between them, and the report gives medians and the ratio
mock/baseline of requests per second and of p50 and p99 latency, then the
mock's start-up time and resident memory. See cmd/inventory-bench/README.md.

Usage:
  inventory-bench [flags]                 run the scenarios
  inventory-bench baseline [flags]        serve the baseline alone: a bare net/http
                                          handler (--addr, --api-key, --generate, --seed)
  inventory-bench bare-proxy [flags]      serve a bare httputil.ReverseProxy, the scale of the
                                          proxy-* scenarios (--addr, --proxy-to)`

// parse reads the bench's flags and the scenarios they name; on --help it
// writes the help to stdout.
func parse(args []string, stdout io.Writer) (*options, error) {
	o := &options{}
	if err := parseMode("inventory-bench", o, map[string]string{"scenarios": strings.Join(scenarioNames(), ", ")}, args, stdout, help,
		"\nExit status: 0 every scenario ran; 1 a scenario failed; 2 bad flags.\n"); err != nil {
		return nil, err
	}
	if o.Version {
		return o, nil
	}
	names := o.Names
	if names == "all" {
		names = strings.Join(scenarioNames(), ",")
	}
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(scenarioNames(), n) {
			return nil, cli.Usagef("--scenarios: unknown scenario %q; want %s", n, strings.Join(scenarioNames(), ", "))
		}
		o.scenarios = append(o.scenarios, n)
	}
	switch {
	case len(o.scenarios) == 0:
		return nil, cli.Usagef("--scenarios: none given")
	case o.Duration <= 0 || o.Rounds < 1 || o.Clients < 1 || o.StartupRuns < 1 || o.Warmup < 0:
		return nil, cli.Usagef("--duration, --rounds, --clients and --startup-runs must be positive")
	}
	return o, nil
}

func scenarioNames() []string {
	var names []string
	for _, s := range scenarios {
		names = append(names, s.name)
	}
	return append(names, startupName)
}

// measure measures what o asks for and prints the report to stdout. With
// "baseline" as its first argument it serves the baseline instead, and
// with "bare-proxy" the bare proxy of the bare-proxy-* scenarios.
func measure(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "baseline" {
		return runBaseline(ctx, args[1:], stdout)
	}
	if len(args) > 0 && args[0] == "bare-proxy" {
		return runBareProxy(ctx, args[1:], stdout)
	}
	o, err := parse(args, stdout)
	if err != nil {
		return err
	}
	if o.Version {
		fmt.Fprintln(stdout, "inventory-bench", cli.Version(version))
		return nil
	}
	dir, err := os.MkdirTemp("", "inventory-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mock := o.Mock
	if mock == "" {
		if mock, err = buildMock(ctx, dir, stderr); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	b := &bench{o: o, out: stdout, args: args, self: self, mock: []string{mock, "--api-key", benchKey}, baseline: []string{self, "baseline", "--api-key", benchKey}}
	if o.Against != "" {
		b.baseline = []string{o.Against, "--api-key", benchKey}
	}
	b.header()
	var failed []string
	for _, name := range o.scenarios {
		if name == startupName {
			err = b.startup(ctx)
		} else {
			i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
			err = b.scenario(ctx, scenarios[i])
		}
		if err != nil {
			fmt.Fprintf(stdout, "  FAILED: %v\n\n", err)
			failed = append(failed, name)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	b.summary()
	if len(failed) > 0 {
		return fmt.Errorf("failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// buildMock builds cmd/inventory-mock into dir, as a user's go build
// would (the same build as this binary's baseline, cgo and all).
func buildMock(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	out := filepath.Join(dir, "inventory-mock")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/petstore/inventory-kit/cmd/inventory-mock")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/inventory-mock (run inside the module, or pass --mock): %w", err)
	}
	return out, nil
}

// A bench is one run: its settings and the figures it has gathered.
type bench struct {
	o              *options
	args           []string // as given, for the report
	out            io.Writer
	mock, baseline []string // argv of each server, without --addr
	self           string   // this executable, which serves bare-proxy
	rows           []row
	startupRows    [][3]string // what, figure, target
}

// A row is the medians of one scenario.
type row struct {
	s                  scenario
	mock, base         figures
	rpsRatio, p99Ratio float64
	rpsMin, rpsMax     float64 // the spread of the rps ratio over rounds
}

// figures are the medians of one server's rounds.
type figures struct {
	rps      float64
	p50, p99 time.Duration
	cpu      time.Duration // the server's CPU time per request
}

func (b *bench) header() {
	o := b.o
	baseline := "inventory-bench baseline (child process; bare net/http: checks the key, writes the same list bytes, updates under a lock; no log, no validation)"
	if o.Against != "" {
		baseline = filepath.Base(o.Against) + " (--against: another inventory-mock build, run as the mock is; the proxy-* scenarios still set the proxy against the mock)"
	}
	fmt.Fprintf(b.out, `inventory-bench: the mock against a baseline, with the same client, concurrency and duration
  run:      %s
  mock:     %s (child process; auth and request validation on; text access log to /dev/null, as users run it)
  baseline: %s
  proxy:    in the proxy-* scenarios, the mock binary with --proxy-to the mock (child process; checks every request and answer; text access log to /dev/null), against the mock directly;
            in bare-proxy-*, inventory-bench bare-proxy instead (a bare httputil.ReverseProxy, no checks, no log), for scale
  client:   this process, %d keep-alive connections, each sending requests back to back (hand-written HTTP/1.1)
  machine:  %d cores, %s/%s, %s; client and both servers share these cores, and each server gets the same treatment
  rounds:   %d of %s per server and scenario, alternating mock and baseline, after %s of warm-up each; figures are medians over rounds,
            ratios are mock/baseline per pair of rounds, then the median

`, strings.Join(append([]string{"inventory-bench"}, b.args...), " "), filepath.Base(b.mock[0]), baseline, o.Clients, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version(),
		o.Rounds, o.Duration, o.Warmup)
}

// scenario starts both servers, checks they send the same list, and runs
// the alternating rounds.
func (b *bench) scenario(ctx context.Context, s scenario) error {
	fmt.Fprintf(b.out, "scenario %s: %s\n", s.name, s.about)
	gen := generated(s.pets)
	mockName, mockArgv := "mock", slices.Concat(b.mock, gen)
	var backend *server // the engine's server (redis-server), if it has one
	if s.store != "" {
		arg, srv, cleanup, err := prepareStore(ctx, s.store, b.o.RedisFsync)
		if err != nil {
			return err
		}
		defer cleanup()
		backend = srv
		mockName, mockArgv = s.store, slices.Concat(mockArgv, []string{"--store", arg})
	}
	mock, err := start(ctx, mockName, mockArgv)
	if err != nil {
		return err
	}
	defer mock.stop()
	var base *server
	baseName := "baseline"
	if s.proxy {
		// The proxy in front of the mock is measured, against that mock.
		name, argv := "proxy", slices.Concat(b.mock, []string{"--proxy-to", "http://" + mock.addr + "/v1"})
		if s.bare {
			name, argv = "bare", []string{b.self, "bare-proxy", "--proxy-to", "http://" + mock.addr + "/v1"}
		}
		px, err := start(ctx, name, argv)
		if err != nil {
			return err
		}
		defer px.stop()
		mock, base, mockName, baseName = px, mock, name, mockName
	} else {
		baseArgv := slices.Concat(b.baseline, gen)
		if s.versus != nil {
			baseName, baseArgv = s.versus.name, slices.Concat(b.mock, gen, s.versus.args)
		}
		if base, err = start(ctx, baseName, baseArgv); err != nil {
			return err
		}
		defer base.stop()
	}
	if err := sameList(mock.addr, base.addr); err != nil {
		return err
	}
	servers := []*server{mock, base}
	requests := func(srv *server) func(c, n int) request {
		if srv == base && s.baseRequests != nil {
			return s.baseRequests(srv.addr)
		}
		return s.requests(srv.addr)
	}
	for _, srv := range servers {
		if b.o.Warmup > 0 {
			if r := load(ctx, srv.addr, b.o.Clients, b.o.Warmup, requests(srv)); r.failures > 0 {
				return fmt.Errorf("%s: %d failed requests in warm-up, the first: %v", srv.name, r.failures, r.firstErr)
			}
		}
	}
	var mockRounds, baseRounds []result
	var rpsRatios, p99Ratios, backendCPU []float64
	for round := range b.o.Rounds {
		order := servers
		if round%2 == 1 {
			order = []*server{base, mock}
		}
		got := map[*server]result{}
		for _, srv := range order {
			cpu0, _ := srv.cpu()
			bcpu0 := backend.cpuOrZero()
			r := load(ctx, srv.addr, b.o.Clients, b.o.Duration, requests(srv))
			cpu1, _ := srv.cpu()
			r.serverCPU = cpu1 - cpu0
			if srv == mock && backend != nil && r.requests > 0 {
				backendCPU = append(backendCPU, float64((backend.cpuOrZero()-bcpu0)/time.Duration(r.requests)))
			}
			if r.failures > 0 {
				return fmt.Errorf("%s: %d of %d requests failed, the first: %v", srv.name, r.failures, r.requests, r.firstErr)
			}
			got[srv] = r
		}
		m, bs := got[mock], got[base]
		mockRounds, baseRounds = append(mockRounds, m), append(baseRounds, bs)
		rpsRatios = append(rpsRatios, m.rps()/bs.rps())
		p99Ratios = append(p99Ratios, float64(m.percentile(0.99))/float64(bs.percentile(0.99)))
		fmt.Fprintf(b.out, "  round %d   %s %s   %s %s   ratio rps %.2f p99 %.2f", round+1,
			mockName, describeFigures(medians([]result{m})), baseName, describeFigures(medians([]result{bs})), rpsRatios[round], p99Ratios[round])
		if s.proxy {
			fmt.Fprintf(b.out, " p50 %+.2fms", float64(m.percentile(0.50)-bs.percentile(0.50))/float64(time.Millisecond))
		}
		fmt.Fprintln(b.out)
	}
	r := row{s: s, mock: medians(mockRounds), base: medians(baseRounds), rpsRatio: median(rpsRatios), p99Ratio: median(p99Ratios),
		rpsMin: slices.Min(rpsRatios), rpsMax: slices.Max(rpsRatios)}
	b.rows = append(b.rows, r)
	fmt.Fprintf(b.out, "  median    %s %s   %s %s\n", mockName, describeFigures(r.mock), baseName, describeFigures(r.base))
	fmt.Fprintf(b.out, "  ratio %s/%s: rps %.2f (rounds %.2f to %.2f)%s", mockName, baseName,
		r.rpsRatio, r.rpsMin, r.rpsMax, verdict(s.rpsTarget > 0, r.rpsRatio >= s.rpsTarget, bound(">=", s.rpsTarget)))
	if added := r.mock.p50 - r.base.p50; s.proxy {
		fmt.Fprintf(b.out, ", p50 %+.2fms%s, p99 %.2f\n", float64(added)/float64(time.Millisecond),
			verdict(s.p50Added > 0, added <= s.p50Added, "<= +"+s.p50Added.String()), r.p99Ratio)
	} else {
		fmt.Fprintf(b.out, ", p50 %.2f, p99 %.2f%s\n", float64(r.mock.p50)/float64(r.base.p50),
			r.p99Ratio, verdict(s.store == "", r.p99Ratio <= p99Target, bound("<=", p99Target)))
	}
	if len(backendCPU) > 0 {
		fmt.Fprintf(b.out, "  %s CPU per request of the %s mock: %s (median of rounds)\n", backend.name, mockName, us(time.Duration(median(backendCPU))))
	}
	for _, srv := range servers {
		if rss, err := srv.rss(); err == nil {
			target := ""
			if srv == mock && s.maxRSS > 0 {
				target = " (target < " + mib(s.maxRSS) + verdict(true, rss < s.maxRSS, "") + ")"
			}
			fmt.Fprintf(b.out, "  %s resident memory after the rounds: %s%s\n", srv.name, mib(rss), target)
		}
	}
	fmt.Fprintln(b.out)
	return nil
}

// generated is the flags that make a server serve pets generated pets;
// none for 0, the default fixtures.
func generated(pets int) []string {
	if pets == 0 {
		return nil
	}
	return []string{"--generate", strconv.Itoa(pets), "--seed", "1"}
}

// sameList checks that the mock and the baseline send the same list bytes.
func sameList(mockAddr, baseAddr string) error {
	var bodies [2]bytes.Buffer
	for i, addr := range []string{mockAddr, baseAddr} {
		c, err := dial(addr)
		if err != nil {
			return err
		}
		status, err := c.do(listRequest(addr, benchKey).raw, &bodies[i])
		c.close()
		if err != nil || status != 200 {
			return fmt.Errorf("GET /v1/inventory: status %d, %v", status, err)
		}
	}
	if !bytes.Equal(bodies[0].Bytes(), bodies[1].Bytes()) {
		return fmt.Errorf("the mock and the baseline send different lists (%d and %d bytes)", bodies[0].Len(), bodies[1].Len())
	}
	return nil
}

// startup measures the mock's start-up, from exec to the first 200 on GET
// /v1/inventory, and its resident memory after that first list.
func (b *bench) startup(ctx context.Context) error {
	fmt.Fprintln(b.out, "start-up: from exec to the first 200 on GET /v1/inventory (polled every 0.2 ms); resident memory (VmRSS) after it")
	for _, t := range []struct {
		what       string
		pets, runs int
		maxStart   time.Duration
		maxRSS     int64
	}{
		{"default fixtures (64 pets)", 0, b.o.StartupRuns, 50 * time.Millisecond, 0},
		{"10,000 pets", 10_000, b.o.StartupRuns, 0, 0},
		{"1,000,000 pets", 1_000_000, min(b.o.StartupRuns, 3), time.Second, 250 << 20},
	} {
		var times, rsses []float64
		for range t.runs {
			s, err := start(ctx, "mock", slices.Concat(b.mock, generated(t.pets)))
			if err != nil {
				return err
			}
			r, err := s.rss()
			s.stop()
			if err != nil {
				return err
			}
			times, rsses = append(times, float64(s.startup)), append(rsses, float64(r))
		}
		d, rss := time.Duration(median(times)), int64(median(rsses))
		startTarget, rssTarget := "", ""
		if t.maxStart > 0 {
			startTarget = "< " + t.maxStart.String() + verdict(true, d < t.maxStart, "")
		}
		if t.maxRSS > 0 {
			rssTarget = "< " + mib(t.maxRSS) + verdict(true, rss < t.maxRSS, "")
		}
		fmt.Fprintf(b.out, "  %-28s start-up %-10s %-22s resident %-10s %s  (median of %d)\n", t.what,
			round(d), startTarget, mib(rss), rssTarget, t.runs)
		b.startupRows = append(b.startupRows,
			[3]string{"start-up, " + t.what, round(d).String(), startTarget},
			[3]string{"resident memory, " + t.what, mib(rss), rssTarget})
	}
	fmt.Fprintln(b.out)
	return nil
}

// summary prints the figures as Markdown tables, for cmd/inventory-bench/README.md.
func (b *bench) summary() {
	mockRows := slices.DeleteFunc(slices.Clone(b.rows), func(r row) bool { return r.s.proxy })
	if len(b.rows) > 0 {
		fmt.Fprintf(b.out, "summary (%d clients, %d rounds of %s, medians; %d cores):\n\n", b.o.Clients, b.o.Rounds, b.o.Duration, runtime.NumCPU())
	}
	if len(mockRows) > 0 {
		fmt.Fprintln(b.out, "| scenario | mock rps | mock p50 | mock p99 | mock CPU/req | baseline rps | baseline p50 | baseline p99 | baseline CPU/req | ratio rps | ratio p99 |")
		fmt.Fprintln(b.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, r := range mockRows {
			fmt.Fprintf(b.out, "| %s | %.0f | %s | %s | %s | %.0f | %s | %s | %s | %.2f%s | %.2f%s |\n", r.s.name,
				r.mock.rps, ms(r.mock.p50), ms(r.mock.p99), us(r.mock.cpu),
				r.base.rps, ms(r.base.p50), ms(r.base.p99), us(r.base.cpu),
				r.rpsRatio, verdict(r.s.rpsTarget > 0, r.rpsRatio >= r.s.rpsTarget, ""),
				r.p99Ratio, verdict(r.s.store == "", r.p99Ratio <= p99Target, ""))
		}
		fmt.Fprintln(b.out)
		b.engineNote()
	}
	b.proxySummary()
	if len(b.startupRows) > 0 {
		fmt.Fprintln(b.out, "| mock start-up and memory | median | target |")
		fmt.Fprintln(b.out, "|---|---:|---|")
		for _, r := range b.startupRows {
			fmt.Fprintf(b.out, "| %s | %s | %s |\n", r[0], r[1], r[2])
		}
		fmt.Fprintln(b.out)
	}
}

// proxySummary prints the proxy scenarios as a Markdown table; in a
// bare-proxy row, the proxy is the bare ReverseProxy.
func (b *bench) proxySummary() {
	rows := slices.DeleteFunc(slices.Clone(b.rows), func(r row) bool { return !r.s.proxy })
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(b.out, "| proxy scenario | proxy rps | proxy p50 | proxy p99 | proxy CPU/req | mock rps | mock p50 | mock p99 | ratio rps (rounds) | p50 added | against the bare hop |")
	fmt.Fprintln(b.out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		added := r.mock.p50 - r.base.p50
		fmt.Fprintf(b.out, "| %s | %.0f | %s | %s | %s | %.0f | %s | %s | %.2f (%.2f-%.2f)%s | %+.2fms%s | %s |\n", r.s.name,
			r.mock.rps, ms(r.mock.p50), ms(r.mock.p99), us(r.mock.cpu), r.base.rps, ms(r.base.p50), ms(r.base.p99),
			r.rpsRatio, r.rpsMin, r.rpsMax, verdict(r.s.rpsTarget > 0, r.rpsRatio >= r.s.rpsTarget, ""),
			float64(added)/float64(time.Millisecond), verdict(r.s.p50Added > 0, added <= r.s.p50Added, ""), againstBare(r, rows))
	}
	fmt.Fprintln(b.out)
}

// againstBare is a validating proxy's rate as a share of the bare hop's on
// the same requests (proxy-update against bare-proxy-update): the ratio of
// their ratios to the mock measured directly in each scenario, with the
// widest spread their rounds allow. Empty for a bare row, or where the
// bare scenario of the same requests did not run.
func againstBare(r row, rows []row) string {
	if r.s.bare {
		return ""
	}
	for _, bare := range rows {
		if bare.s.bare && bare.s.name == "bare-"+r.s.name && bare.rpsRatio > 0 && bare.rpsMin > 0 {
			return fmt.Sprintf("%.2f (%.2f-%.2f)", r.rpsRatio/bare.rpsRatio, r.rpsMin/bare.rpsMax, r.rpsMax/bare.rpsMin)
		}
	}
	return ""
}

// bound writes a target with all its digits: %.1f would show 0.95 as 0.9.
func bound(op string, target float64) string {
	return op + " " + strconv.FormatFloat(target, 'f', -1, 64)
}

// verdict says whether a target is met, if there is one.
func verdict(has, met bool, target string) string {
	switch {
	case !has:
		return ""
	case target == "" && met:
		return " (met)"
	case target == "":
		return " (MISSED)"
	case met:
		return " (target " + target + ": met)"
	}
	return " (target " + target + ": MISSED)"
}

func describeFigures(f figures) string {
	return fmt.Sprintf("%7.0f rps p50 %s p99 %s cpu/req %s", f.rps, ms(f.p50), ms(f.p99), us(f.cpu))
}

func medians(rs []result) figures {
	var rps, p50, p99, cpu []float64
	for _, r := range rs {
		rps = append(rps, r.rps())
		p50 = append(p50, float64(r.percentile(0.50)))
		p99 = append(p99, float64(r.percentile(0.99)))
		cpu = append(cpu, float64(r.cpuPerRequest()))
	}
	return figures{rps: median(rps), p50: time.Duration(median(p50)), p99: time.Duration(median(p99)), cpu: time.Duration(median(cpu))}
}

// median returns the middle value, or the mean of the two middle values.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func us(d time.Duration) string { return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20)) }

// round keeps three significant digits of a start-up time.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Microsecond)
}
