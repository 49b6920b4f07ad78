package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets the test binary serve the baseline and the bare proxy:
// run starts its own executable with "baseline" or "bare-proxy" as the
// first argument, and under go test that executable is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "baseline" || os.Args[1] == "bare-proxy") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		serve := runBaseline
		if os.Args[1] == "bare-proxy" {
			serve = runBareProxy
		}
		err := serve(ctx, os.Args[2:], os.Stderr)
		stop()
		if err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestSmoke runs the smoke run CI uses and checks the report has its parts.
// It checks no figure: timings on a shared machine prove nothing.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes and builds the mock")
	}
	names, want := "list,errors,update-file,proxy-list", []string{
		"scenario list:",
		"scenario errors:",
		"ratio mock/baseline: rps ",
		"| list |",
		"| errors |",
		"ratio file/memory: rps ",
		"| update-file |",
		"scenario proxy-list:",
		"ratio proxy/mock: rps ",
		"| proxy-list |",
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		names += ",update-redis"
		want = append(want, "ratio redis/memory: rps ", "redis-server CPU per request", "| update-redis |")
	}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--duration", "200ms", "--warmup", "50ms", "--rounds", "1", "--scenarios", names}, &stdout, &stderr)
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
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // part of the error; "" for none
	}{
		{nil, ""},
		{[]string{"--scenarios", "list, startup"}, ""},
		{[]string{"--scenarios", "proxy-list,proxy-update,bare-proxy-list"}, ""},
		{[]string{"--scenarios", "lists"}, `unknown scenario "lists"`},
		{[]string{"--scenarios", ","}, "none given"},
		{[]string{"--rounds", "0"}, "must be positive"},
		{[]string{"--redis-appendfsync", "sometimes"}, `want always, everysec or no`},
		{[]string{"--redis-appendfsync", "everysec"}, ""},
		{[]string{"extra"}, `unexpected argument "extra" (see --help)`},
		{[]string{"--nope"}, "flag provided but not defined: -nope (see --help)"},
	} {
		_, err := parse(tt.args)
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
	if err := run(t.Context(), []string{"--help"}, &stdout, &stderr); !errors.Is(err, flag.ErrHelp) {
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
	if err := run(t.Context(), []string{"--version"}, &stdout, &stderr); err != nil || !strings.HasPrefix(stdout.String(), "inventory-bench ") {
		t.Errorf("--version = %q, %v", stdout.String(), err)
	}
}
