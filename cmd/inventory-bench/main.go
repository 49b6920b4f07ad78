// Command inventory-bench measures inventory-mock against a baseline, a
// bare net/http handler that does the least a correct server could do, on
// the same machine, with the same client, concurrency and duration:
//
//	go run ./cmd/inventory-bench
//
// Both servers run as child processes: the mock is the real inventory-mock
// binary (built with go build unless --mock names one), logging as users
// run it, to /dev/null; the baseline is this binary's hidden "baseline"
// mode. Rounds alternate between them, and the report gives medians and the
// ratio mock/baseline for requests per second and p50 and p99 latency, then
// the mock's start-up time and resident memory. See --help.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := report(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr)
	stop()
	os.Exit(code)
}

// Exit statuses.
const (
	exitOK     = 0 // every scenario ran; --help, --version; a server stopped by a signal
	exitFailed = 1 // a scenario failed, or a server could not serve
	exitUsage  = 2 // bad flags, for the bench and its subcommands alike
)

// report prints run's error as one line on stderr, none for --help, and
// returns the exit status.
func report(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintln(stderr, "inventory-bench:", err)
	var usage *cli.UsageError
	if errors.As(err, &usage) {
		return exitUsage
	}
	return exitFailed
}
