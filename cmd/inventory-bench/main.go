// Command inventory-bench measures inventory-mock against a baseline, a
// bare net/http handler that does the least a correct server could do, on
// the same machine, with the same client, concurrency and duration:
//
//	go run ./cmd/inventory-bench
//
// See --help and README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

func main() { cli.Main("inventory-bench", run) }

// run runs the bench (a cli.Run): a mistake on the command line exits 2,
// a scenario that failed or a server that could not serve exits 1.
func run(ctx context.Context, args []string, _ func(string) (string, bool), stdout, stderr io.Writer) error {
	err := measure(ctx, args, stdout, stderr)
	var usage *cli.UsageError
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.As(err, &usage) {
		return err
	}
	return cli.Failed(err)
}

// parseMode parses the flags of command name (inventory-bench, or one of
// its modes) into o; on --help it prints usage, the flags and after to
// stdout.
func parseMode(name string, o any, vars map[string]string, args []string, stdout io.Writer, usage, after string) error {
	p := cli.New(name, o, vars, false)
	err := p.Parse(args, nil)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, usage+"\n\nFlags:")
		cli.PrintFlags(stdout, p.Lines(nil))
		fmt.Fprint(stdout, "  --help\n      show this help\n"+after)
	}
	return err
}

// serve serves h on addr until ctx is done.
func serve(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
