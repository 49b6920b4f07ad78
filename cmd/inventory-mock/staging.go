package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/metrics"
)

// stagingOptions are the settings of a mock that lives beside staging:
// records from a live backend, the spec reloaded when it changes, a rate
// limit, and metrics.
type stagingOptions struct {
	fixturesFrom    string
	fixturesTimeout time.Duration
	upstreamKey     upstreamKeyFlag
	watch           bool
	rateLimit       string
	limit           mockserver.RateLimit // rateLimit, parsed
	metrics         bool
	metricsAddr     string

	m *metrics.Metrics // the run's, from newMetrics; nil: none
}

// upstreamKeyEnv is the variable of --upstream-api-key: the backend's key,
// not the mock's, so not INVENTORY_MOCK_*.
const upstreamKeyEnv = "INVENTORY_UPSTREAM_API_KEY"

// stagingFlags declares the flags of stagingOptions on fs.
func stagingFlags(fs *flag.FlagSet, s *stagingOptions) {
	fs.StringVar(&s.fixturesFrom, "fixtures-from", "", "serve the records of the backend at this `URL`, its base path included, such as https://staging.example.com/v1: listed once at start-up with --upstream-api-key, each checked against the spec (TLS: the --upstream-* flags)")
	fs.DurationVar(&s.fixturesTimeout, "fixtures-timeout", defaultFixturesTimeout, "--fixtures-from: give up when the whole list has not arrived within this `duration`")
	fs.Var(&s.upstreamKey, "upstream-api-key", "the backend's API `key` for --fixtures-from; never printed (better in the variable: ps shows a command line)")
	fs.BoolVar(&s.watch, "watch", false, "reload the --spec file when it, or a file next to it, changes: no restart, records kept; an edit that does not load is logged and the spec in force keeps serving")
	fs.StringVar(&s.rateLimit, "rate-limit", "", "let each API key and session send requests at this `RATE`, N/s or N/m, with :BURST at once, such as 10/s or 600/m:50; past it, 429 with Retry-After; PUT /__admin/rate-limit changes it")
	fs.BoolVar(&s.metrics, "metrics", true, "serve Prometheus metrics at GET /metrics, behind the admin key; --metrics=false turns them off")
	fs.StringVar(&s.metricsAddr, "metrics-addr", "", "also serve the metrics at http://`host:port`/metrics without a key, for a scraper that cannot send one")
}

// check reports settings that make no sense together.
func (s *stagingOptions) check(o *options) error {
	switch {
	case o.proxy.to != "" && (s.fixturesFrom != "" || s.watch || s.rateLimit != ""):
		return errors.New("--proxy-to: --fixtures-from, --watch and --rate-limit are the mock's")
	case s.fixturesFrom != "" && (o.generate > 0 || o.fixturesFile != ""):
		return errors.New("--fixtures-from, --fixtures and --generate exclude each other")
	case s.fixturesFrom != "" && s.upstreamKey == "":
		return fmt.Errorf("--fixtures-from needs the backend's key: set %s (or --upstream-api-key)", upstreamKeyEnv)
	case s.fixturesTimeout <= 0:
		return errors.New("--fixtures-timeout must be positive")
	case s.fixturesFrom == "" && o.given["upstream-api-key"]:
		return errors.New("--upstream-api-key is the key of --fixtures-from, which is not given")
	case s.watch && o.specFile == "":
		return errors.New("--watch reloads the file of --spec; give --spec FILE")
	case s.watch && o.storeFlag.kind == storeRedis:
		return errors.New("--watch: replicas sharing a Redis store would serve different contracts; use it with the memory or file store")
	case s.metricsAddr != "" && !s.metrics:
		return errors.New("--metrics-addr serves the metrics, which --metrics=false turns off")
	}
	if s.rateLimit != "" {
		var err error
		if s.limit, err = mockserver.ParseRateLimitFlag(s.rateLimit); err != nil {
			return err
		}
	}
	return nil
}

// An upstreamKeyFlag is --upstream-api-key. It is refused empty on the
// command line; its variable set to "" counts as not set, so that
// --fixtures-from says the key is missing, and a mock without
// --fixtures-from does not care.
type upstreamKeyFlag string

func (u *upstreamKeyFlag) String() string { return "" } // never the key: help shows no default

func (u *upstreamKeyFlag) Set(v string) error {
	if v = strings.TrimSpace(v); v == "" {
		return errors.New("an empty key; give the backend's API key, or leave the setting out")
	}
	*u = upstreamKeyFlag(v)
	return nil
}
