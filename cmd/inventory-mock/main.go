// Command inventory-mock serves the Pet Store Inventory contract as a
// stateful mock: real bearer keys, the contract's Error body on every error,
// request validation against the spec, and writes that later reads see;
// with controls for frontend teams (Prefer, sessions, latency and faults, a
// request journal) under /__admin/.
//
//	go run ./cmd/inventory-mock
//
// starts it on 127.0.0.1:8080 with the embedded spec and fixtures. Every
// setting flag can also be set from the environment; see --help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr, nil)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "inventory-mock:", err)
	}
	os.Exit(exitCode(err))
}

// Exit statuses.
const (
	exitOK          = 0 // served until stopped, or --help, --version, --print-fixtures
	exitUnhealthy   = 1 // --health-check: the mock did not answer 200 (Docker reserves 2)
	exitViolations  = 1 // proxy mode with --fail-on-violation: the traffic broke the contract
	exitCannotStart = 2 // bad flags, a bad spec or fixture file, an address in use
)

// exitCode maps run's error to the exit status.
func exitCode(err error) int {
	var unhealthy *unhealthyError
	var violations *violationsError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &unhealthy):
		return exitUnhealthy
	case errors.As(err, &violations):
		return exitViolations
	}
	return exitCannotStart
}
