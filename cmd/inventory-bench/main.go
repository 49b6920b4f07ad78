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
	"os"
	"os/signal"
	"syscall"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "inventory-bench:", err)
		var usage *cli.UsageError
		if errors.As(err, &usage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
