// Command inventory-mock serves the Pet Store Inventory contract as a
// stateful mock: real bearer keys, the contract's Error body on every error,
// request validation against the spec, and writes that later reads see.
//
//	go run ./cmd/inventory-mock
//
// starts it on 127.0.0.1:8080 with the embedded spec and fixtures. Every
// flag can also be set from the environment; see --help.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil); err != nil {
		if err != errHelp {
			fmt.Fprintln(os.Stderr, "inventory-mock:", err)
		}
		os.Exit(exitCode(err))
	}
}

// exitCode is 0 for --help, 1 for violations seen by a proxy with
// --fail-on-violation, 2 for everything else that stops the mock.
func exitCode(err error) int {
	var v *violationsError
	switch {
	case err == errHelp:
		return 0
	case errors.As(err, &v):
		return 1
	}
	return 2
}
