package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/cmd/inventory-mock/mcp"
	"github.com/petstore/inventory-kit/mockserver"
)

// serveMCP serves the mock's MCP server on stdin and stdout (--mcp), for
// an editor that starts the mock: the returned context ends when stdin
// does (the editor is done with it), which stops the mock. Nothing else
// writes to stdout: the logs go to stderr.
func serveMCP(ctx context.Context, mock *mockserver.Server, stdin io.Reader, stdout io.Writer, logger *slog.Logger) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		in, ok := stdin.(io.ReadCloser)
		if !ok {
			in = io.NopCloser(stdin)
		}
		err := mcp.ServeStdio(ctx, mock, cli.Version(version), in, nopWriteCloser{stdout})
		if err != nil {
			logger.Error("MCP on stdin and stdout stopped", "error", err)
			return
		}
		if ctx.Err() == nil {
			logger.Info("MCP: stdin ended; stopping")
		}
	}()
	logger.Info("MCP on stdin and stdout; also at /__admin/mcp")
	return ctx, func() {
		cancel()
		select { // a read of stdin in flight may not end at once
		case <-done:
		case <-time.After(time.Second):
		}
	}
}

// A nopWriteCloser is a writer whose Close does nothing: the process's
// stdout stays open.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
