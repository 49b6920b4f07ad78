package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestLoadAgainstWrk sets the bench's load client beside wrk, with the
// scripts of testdata/wrk, on the same servers and scenarios (README.md,
// "Why its own client"): 5 rounds of 5 s per scenario, server and client,
// 32 connections, the order of servers and of clients alternating. It
// logs each client's requests per second and CPU time per request (load's
// from this process's rusage, wrk's from its own) and the server's CPU
// time per request, medians and the lowest and highest of the rounds, and
// the ratio mock/baseline the bench would read through each client. It
// runs only with INVENTORY_BENCH_WRK=1, for about 6 minutes.
func TestLoadAgainstWrk(t *testing.T) {
	if os.Getenv("INVENTORY_BENCH_WRK") != "1" {
		t.Skip("set INVENTORY_BENCH_WRK=1 to set the load client beside wrk")
	}
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		t.Fatal(err)
	}
	mockBin, err := buildMock(t.Context(), t.TempDir(), os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mock, err := start(t.Context(), "mock", []string{mockBin, "--api-key", benchKey})
	if err != nil {
		t.Fatal(err)
	}
	defer mock.stop()
	base, err := start(t.Context(), "baseline", []string{self, "baseline", "--api-key", benchKey})
	if err != nil {
		t.Fatal(err)
	}
	defer base.stop()

	const clients, d, rounds = 32, 5 * time.Second, 5
	type run struct{ rps, clientCPU, serverCPU float64 } // CPU in µs per request
	type key struct{ scenario, server, client string }
	got := map[key][]run{}
	for round := range rounds {
		for _, name := range []string{"list", "update", "errors"} {
			servers, loaders := []*server{mock, base}, []string{"load", "wrk"}
			if round%2 == 1 {
				servers, loaders = []*server{base, mock}, []string{"wrk", "load"}
			}
			for _, srv := range servers {
				for _, client := range loaders {
					cpu0, _ := srv.cpu()
					var n int
					var rps float64
					var clientCPU time.Duration
					if client == "load" {
						i := slices.IndexFunc(scenarios, func(s scenario) bool { return s.name == name })
						ru0 := rusage(t)
						r := load(t.Context(), srv.addr, clients, d, scenarios[i].requests(srv.addr))
						clientCPU = rusage(t) - ru0
						if r.failures > 0 {
							t.Fatalf("%s on %s: %d failed, the first: %v", name, srv.name, r.failures, r.firstErr)
						}
						n, rps = r.requests, r.rps()
					} else {
						n, rps, clientCPU = runWrk(t, wrk, name, srv.addr, clients, d)
					}
					cpu1, _ := srv.cpu()
					k := key{name, srv.name, client}
					got[k] = append(got[k], run{rps, float64(clientCPU.Microseconds()) / float64(n), float64((cpu1 - cpu0).Microseconds()) / float64(n)})
				}
			}
		}
	}
	spread := func(xs []float64, format string) string {
		return fmt.Sprintf(format+" ("+format+"-"+format+")", median(xs), slices.Min(xs), slices.Max(xs))
	}
	t.Log("| scenario | server | client | rps (rounds) | client CPU/req µs | server CPU/req µs | wrk/load rps, per round | wrk/load client CPU/req |")
	for _, name := range []string{"list", "update", "errors"} {
		for _, srv := range []string{"mock", "baseline"} {
			for _, client := range []string{"load", "wrk"} {
				var rps, ccpu, scpu, rpsRatio, cpuRatio []float64
				for i, r := range got[key{name, srv, client}] {
					l := got[key{name, srv, "load"}][i]
					rps, ccpu, scpu = append(rps, r.rps), append(ccpu, r.clientCPU), append(scpu, r.serverCPU)
					rpsRatio, cpuRatio = append(rpsRatio, r.rps/l.rps), append(cpuRatio, r.clientCPU/l.clientCPU)
				}
				ratios := "| |"
				if client == "wrk" {
					ratios = "| " + spread(rpsRatio, "%.2f") + " | " + spread(cpuRatio, "%.2f") + " |"
				}
				t.Logf("| %s | %s | %s | %s | %s | %s %s", name, srv, client, spread(rps, "%.0f"), spread(ccpu, "%.1f"), spread(scpu, "%.1f"), ratios)
			}
		}
		for _, client := range []string{"load", "wrk"} {
			var ratios []float64
			for i, m := range got[key{name, "mock", client}] {
				ratios = append(ratios, m.rps/got[key{name, "baseline", client}][i].rps)
			}
			t.Logf("%s, mock/baseline rps through %s, per round: %s", name, client, spread(ratios, "%.2f"))
		}
	}
}

// rusage returns the CPU time, user and system, this process has used.
func rusage(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	wrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in `)
	wrkRate     = regexp.MustCompile(`(?m)^Requests/sec:\s*([0-9.]+)`)
	wrkStatuses = regexp.MustCompile(`(?m)^statuses: 401 (\d+), 400 (\d+), other 0$`)
	wrkErrors   = regexp.MustCompile(`Non-2xx|Socket errors`)
)

// runWrk runs wrk with testdata/wrk/NAME.lua against addr and returns the
// requests it made, their rate and wrk's CPU time. It fails the test on a
// wrong status: for the errors scenario the script counts the statuses
// (CHECK=1), for the others wrk's own "Non-2xx" line must be absent.
func runWrk(t *testing.T, wrk, name, addr string, clients int, d time.Duration) (int, float64, time.Duration) {
	cmd := exec.CommandContext(t.Context(), wrk, "-t2", "-c"+strconv.Itoa(clients), "-d"+strconv.Itoa(int(d.Seconds()))+"s",
		"-s", filepath.Join("testdata", "wrk", name+".lua"), "http://"+addr)
	cmd.Env = append(os.Environ(), "CHECK=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	n, rate := wrkRequests.FindSubmatch(out), wrkRate.FindSubmatch(out)
	bad := wrkErrors.Match(out)
	if name == "errors" {
		bad = wrkStatuses.Find(out) == nil
	}
	if n == nil || rate == nil || bad {
		t.Fatalf("wrk on %s: wrong statuses, errors or an output it cannot read:\n%s", name, out)
	}
	requests, _ := strconv.Atoi(string(n[1]))
	rps, _ := strconv.ParseFloat(string(rate[1]), 64)
	return requests, rps, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}
