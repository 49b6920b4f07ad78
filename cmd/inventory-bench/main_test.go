package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// TestMain lets the test binary serve the baseline and the bare proxy:
// run starts its own executable with "baseline" or "bare-proxy" as the
// first argument, and under go test that executable is this binary, which
// then does what main does.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "baseline" || os.Args[1] == "bare-proxy") {
		main() // as the built command: run, report, exit
	}
	os.Exit(m.Run())
}

// TestSmoke runs the smoke run CI uses and checks the report has its parts.
// It checks no figure: timings on a shared machine prove nothing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes and builds the mock")
	}
	names, want := "list,errors,update-file,proxy-list,update-journal,proxy-update,bare-proxy-update", []string{
		"scenario list:",
		// Targets as the scenarios give them, not rounded (0.85 once read 0.8).
		"(target >= 0.8: ",
		"(target >= 0.85: ",
		"(target <= 1.5: ",
		"scenario errors:",
		"ratio mock/baseline: rps ",
		"| list |",
		"| errors |",
		"ratio file/memory: rps ",
		"| update-file |",
		"scenario proxy-list:",
		"ratio proxy/mock: rps ",
		"| proxy-list |",
		"| proxy-update |",
		"| bare-proxy-update |",
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		names += ",update-redis"
		want = append(want, "ratio redis/memory: rps ", "redis-server CPU per request", "| update-redis |")
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--duration", "200ms", "--warmup", "50ms", "--rounds", "1", "--scenarios", names}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	out := stdout.String()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "ratio mock/baseline:"); n != 2 {
		t.Errorf("%d ratio lines of the mock against the baseline; want 2:\n%s", n, out)
	}
	// proxy-update ran with its bare hop: its row says how it fares against it.
	if !regexp.MustCompile(`(?m)^\| proxy-update \|.*\| [0-9.]+ \([0-9.]+-[0-9.]+\) \|$`).MatchString(out) {
		t.Errorf("the proxy-update row lacks its ratio against the bare hop:\n%s", out)
	}
}

func TestAgainstBare(t *testing.T) {
	byName := func(name string) scenario {
		for _, s := range scenarios {
			if s.name == name {
				return s
			}
		}
		t.Fatalf("no scenario %s", name)
		return scenario{}
	}
	proxyUpdate := row{s: byName("proxy-update"), rpsRatio: 0.30, rpsMin: 0.27, rpsMax: 0.33}
	proxyList := row{s: byName("proxy-list"), rpsRatio: 0.40, rpsMin: 0.40, rpsMax: 0.40}
	bareUpdate := row{s: byName("bare-proxy-update"), rpsRatio: 0.40, rpsMin: 0.36, rpsMax: 0.45}
	bareList := row{s: byName("bare-proxy-list"), rpsRatio: 0.80, rpsMin: 0.80, rpsMax: 0.80}
	for _, tt := range []struct {
		name string
		r    row
		rows []row
		want string
	}{
		{"update against the bare update", proxyUpdate, []row{proxyList, proxyUpdate, bareList, bareUpdate}, "0.75 (0.60-0.92)"},
		{"list against the bare list", proxyList, []row{proxyList, proxyUpdate, bareList, bareUpdate}, "0.50 (0.50-0.50)"},
		{"never against the other requests' hop", proxyUpdate, []row{proxyUpdate, bareList}, ""},
		{"a bare row", bareUpdate, []row{proxyUpdate, bareUpdate}, ""},
	} {
		if got := againstBare(tt.r, tt.rows); got != tt.want {
			t.Errorf("%s: againstBare = %q; want %q", tt.name, got, tt.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // part of the error; "" for none
	}{
		{nil, ""},
		{[]string{"--scenarios", "list, startup"}, ""},
		{[]string{"--scenarios", "proxy-list,proxy-update,bare-proxy-list,bare-proxy-update"}, ""},
		{[]string{"--scenarios", "lists"}, `unknown scenario "lists"`},
		{[]string{"--scenarios", ","}, "none given"},
		{[]string{"--rounds", "0"}, "must be positive"},
		{[]string{"--redis-appendfsync", "sometimes"}, `want always, everysec or no`},
		{[]string{"--redis-appendfsync", "everysec"}, ""},
		{[]string{"extra"}, `unexpected argument "extra" (see --help)`},
		{[]string{"--nope"}, "flag provided but not defined: --nope (see --help)"},
		{[]string{"--rounds", "many"}, `--rounds "many": want a whole number`},
		{[]string{"--duration", "5"}, `--duration "5": want a duration such as 500ms`},
	} {
		_, err := parse(tt.args, io.Discard)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("parse(%q) = %v; want no error", tt.args, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("parse(%q) = %v; want an error with %q", tt.args, err, tt.want)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--help"}, nil, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
	for _, want := range []string{"inventory-bench baseline [flags]", "--scenarios LIST", "--against BINARY", "Exit status"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("--help lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.Len() > 0 {
		t.Errorf("--help wrote to stderr: %s", stderr.String())
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"--version"}, nil, &stdout, &stderr); err != nil || !strings.HasPrefix(stdout.String(), "inventory-bench ") {
		t.Errorf("--version = %q, %v", stdout.String(), err)
	}
}

// TestSubcommandCLI: the subcommands follow the commands' rules: --help on
// stdout, exit 0; a bad flag or a missing --proxy-to, one line with a hint
// to --help, exit 2; flags named --name, never Go's -name.
func TestSubcommandCLI(t *testing.T) {
	tests := []struct {
		args   []string
		status int
		stdout []string // parts of stdout
		err    string   // the error; "" for none
	}{
		{[]string{"bare-proxy", "--help"}, 0, []string{"Usage: inventory-bench bare-proxy --proxy-to URL [flags]", "  --proxy-to URL\n", "  --addr HOST:PORT\n", "(default 127.0.0.1:8082)", "  --help\n"}, ""},
		{[]string{"bare-proxy", "-h"}, 0, []string{"Usage: inventory-bench bare-proxy"}, ""},
		{[]string{"baseline", "--help"}, 0, []string{"Usage: inventory-bench baseline [flags]", "  --api-key KEY\n", "  --generate N\n"}, ""},
		{[]string{"bare-proxy", "--nope"}, 2, nil, "flag provided but not defined: --nope (see --help)"},
		{[]string{"bare-proxy", "--proxy-to"}, 2, nil, "flag needs an argument: --proxy-to (see --help)"},
		{[]string{"bare-proxy"}, 2, nil, "--proxy-to: want the backend's URL, such as http://127.0.0.1:8080/v1 (see --help)"},
		{[]string{"bare-proxy", "--proxy-to", "127.0.0.1:8080/v1"}, 2, nil, `--proxy-to "127.0.0.1:8080/v1": want the backend's http or https URL`},
		{[]string{"bare-proxy", "--proxy-to", "http://127.0.0.1:1/v1", "extra"}, 2, nil, `unexpected argument "extra" (see --help)`},
		{[]string{"baseline", "--nope"}, 2, nil, "flag provided but not defined: --nope (see --help)"},
		{[]string{"baseline", "--generate", "many"}, 2, nil, `--generate "many": want a whole number, such as 10 (see --help)`},
		{[]string{"--nope"}, 2, nil, "flag provided but not defined: --nope (see --help)"},
		{[]string{"--help"}, 0, []string{"inventory-bench bare-proxy [flags]"}, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(t.Context(), tt.args, nil, &stdout, &stderr)
			var printed bytes.Buffer
			if err != nil && !errors.Is(err, flag.ErrHelp) {
				printed.WriteString("inventory-bench: " + err.Error() + "\n")
			}
			if got := cli.Code(err); got != tt.status {
				t.Errorf("exit status = %d (%v); want %d", got, err, tt.status)
			}
			if stderr.Len() > 0 {
				t.Errorf("wrote to stderr: %s", &stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, &stdout)
				}
			}
			if m := goFlagName.FindString(stdout.String() + printed.String()); m != "" {
				t.Errorf("a flag written Go's way, %q:\n%s%s", m, &stdout, &printed)
			}
			switch {
			case tt.err == "" && printed.Len() > 0:
				t.Errorf("printed %q; want nothing", &printed)
			case tt.err != "" && !strings.HasPrefix(printed.String(), "inventory-bench: "+tt.err):
				t.Errorf("printed %q; want inventory-bench: %s", &printed, tt.err)
			case tt.err != "" && strings.Count(printed.String(), "\n") != 1:
				t.Errorf("printed %d lines; want one:\n%s", strings.Count(printed.String(), "\n"), &printed)
			}
		})
	}
}

// goFlagName finds a flag written with one dash, as package flag writes it.
var goFlagName = regexp.MustCompile(`(^|[^-\w])-[a-z][a-z-]+`)

// TestSubcommandProcess runs bare-proxy as the bench runs it, a process of
// its own (this test binary, through TestMain and main), for what only a
// process shows: the streams and the exit status.
func TestSubcommandProcess(t *testing.T) {
	tests := []struct {
		args           []string
		status         int
		stdout, stderr string // stdout: a part; stderr: all of it
	}{
		{[]string{"bare-proxy", "--help"}, 0, "Usage: inventory-bench bare-proxy", ""},
		{[]string{"bare-proxy", "--nope"}, 2, "", "inventory-bench: flag provided but not defined: --nope (see --help)\n"},
		{[]string{"bare-proxy"}, 2, "", "inventory-bench: --proxy-to: want the backend's URL, such as http://127.0.0.1:8080/v1 (see --help)\n"},
		{[]string{"baseline", "--help"}, 0, "Usage: inventory-bench baseline", ""},
		{[]string{"baseline", "--addr", "256.0.0.1:1"}, 1, "", ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			// Each case ends at once; one that serves instead is killed.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], tt.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			status := 0
			if exit, ok := err.(*exec.ExitError); ok {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.status {
				t.Errorf("exit status = %d; want %d\nstderr: %s", status, tt.status, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, &stdout)
			}
			if tt.status != 1 && stderr.String() != tt.stderr {
				t.Errorf("stderr = %q; want %q", &stderr, tt.stderr)
			}
		})
	}
}

// TestBareProxyForwards starts bare-proxy as the bench does and sends a
// request through it: it reaches the backend with /v1 mapped to the
// --proxy-to path, and the answer comes back.
func TestBareProxyForwards(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Path", r.URL.Path)
		io.WriteString(w, "from the backend")
	}))
	defer backend.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(os.Args[0], "bare-proxy", "--addr", addr, "--proxy-to", backend.URL+"/base/v1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var resp *http.Response
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/v1/inventory"); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("bare-proxy did not answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "from the backend" || resp.Header.Get("X-Path") != "/base/v1/inventory" {
		t.Errorf("through bare-proxy: %d %q, backend path %q; want 200 from the backend at /base/v1/inventory", resp.StatusCode, body, resp.Header.Get("X-Path"))
	}
}

// TestAgainstAnotherBuild runs the bench as the README measures a change:
// --against another build of the mock. The header names that build as the
// baseline, and the bare hop still runs (it is this binary's, not the
// other build's).
func TestAgainstAnotherBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes and builds the mock")
	}
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	mock, err := buildMock(t.Context(), dir, &stderr)
	if err != nil {
		t.Fatalf("building the mock: %v\n%s", err, &stderr)
	}
	err = run(t.Context(), []string{"--duration", "200ms", "--warmup", "50ms", "--rounds", "1", "--scenarios", "list,bare-proxy-list",
		"--mock", mock, "--against", mock}, nil, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, &stdout, &stderr)
	}
	for _, want := range []string{"baseline: " + filepath.Base(mock) + " (--against", "| list |", "| bare-proxy-list |"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &stdout)
		}
	}
}
