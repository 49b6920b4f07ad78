package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
)

// unhealthy is a health check that found the mock not serving:
// exit status 1, as container health checks expect.
func unhealthy(err error) error { return cli.Failed(fmt.Errorf("health check: %w", err)) }

// healthCheckAsked reports whether args ask for --health-check, for run
// to exit 1 rather than 2 on a bad setting of a health check.
func healthCheckAsked(args []string) bool {
	return slices.ContainsFunc(cli.FlagArgs(args), func(f cli.FlagArg) bool {
		b, err := strconv.ParseBool(f.Value)
		return f.Name == "health-check" && (!f.Inline || err != nil || b) // a bool flag takes no next argument
	})
}

// healthCheck asks a running mock at o.addr for /healthz. An image without a
// shell or curl uses it as its health check.
func healthCheck(ctx context.Context, o *options) error {
	scheme := "http"
	client := &http.Client{Timeout: 2 * time.Second}
	if o.TLSCert != "" || o.TLSSelfSigned {
		scheme = "https"
		// The check talks to this very process's certificate on loopback.
		client.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return unhealthy(fmt.Errorf("--addr %q: %w", o.Addr, err))
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	req, err := http.NewRequestWithContext(ctx, "GET", scheme+"://"+net.JoinHostPort(host, port)+"/healthz", nil)
	if err != nil {
		return unhealthy(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return unhealthy(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return unhealthy(fmt.Errorf("status %d", resp.StatusCode))
	}
	return nil
}
