package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/mockserver/metrics"
)

// stagingOptions are the settings of a mock that lives beside staging:
// records from a live backend, the spec reloaded when it changes, a rate
// limit, and metrics.
type stagingOptions struct {
	FixturesFrom    string        `name:"fixtures-from" env:"INVENTORY_MOCK_FIXTURES_FROM" placeholder:"URL" help:"serve the records of the backend at this URL, its base path included, such as https://staging.example.com/v1: listed once at start-up with --upstream-api-key, each checked against the spec (TLS: the --upstream-* flags)"`
	FixturesTimeout time.Duration `name:"fixtures-timeout" env:"INVENTORY_MOCK_FIXTURES_TIMEOUT" default:"${fixtures_timeout}" placeholder:"DURATION" help:"--fixtures-from: give up when the whole list has not arrived within this duration"`
	// The backend's key, not the mock's, so not INVENTORY_MOCK_*. Refused
	// empty on the command line; its variable set to "" counts as not
	// set, so that --fixtures-from says the key is missing, and a mock
	// without --fixtures-from does not care.
	UpstreamKey string `name:"upstream-api-key" env:"INVENTORY_UPSTREAM_API_KEY" type:"upstreamkey" placeholder:"KEY" help:"the backend's API key for --fixtures-from; never printed (better in the variable: ps shows a command line)"`
	Watch       bool   `name:"watch" env:"INVENTORY_MOCK_WATCH" help:"reload the --spec file when it, or a file next to it, changes: no restart, records kept; an edit that does not load is logged and the spec in force keeps serving"`
	RateLimit   string `name:"rate-limit" env:"INVENTORY_MOCK_RATE_LIMIT" placeholder:"RATE" help:"let each API key and session send requests at this RATE, N/s or N/m, with :BURST at once, such as 10/s or 600/m:50; past it, 429 with Retry-After; PUT /__admin/rate-limit changes it"`
	Metrics     bool   `name:"metrics" env:"INVENTORY_MOCK_METRICS" default:"true" help:"serve Prometheus metrics at GET /metrics, behind the admin key; --metrics=false turns them off"`
	MetricsAddr string `name:"metrics-addr" env:"INVENTORY_MOCK_METRICS_ADDR" placeholder:"HOST:PORT" help:"also serve the metrics at http://host:port/metrics without a key, for a scraper that cannot send one"`

	limit mockserver.RateLimit // RateLimit, parsed
	m     *metrics.Metrics     // the run's; nil with --metrics=false
}

// upstreamKeyEnv is the variable of --upstream-api-key.
const upstreamKeyEnv = "INVENTORY_UPSTREAM_API_KEY"

// check reports settings that make no sense together.
func (s *stagingOptions) check(o *options) error {
	switch {
	case o.Proxy.To != "" && (s.FixturesFrom != "" || s.Watch || s.RateLimit != ""):
		return errors.New("--proxy-to: --fixtures-from, --watch and --rate-limit are the mock's")
	case s.FixturesFrom != "" && (o.Generate > 0 || o.Fixtures != ""):
		return errors.New("--fixtures-from, --fixtures and --generate exclude each other")
	case s.FixturesFrom != "" && s.UpstreamKey == "":
		return fmt.Errorf("--fixtures-from needs the backend's key: set %s (or --upstream-api-key)", upstreamKeyEnv)
	case s.FixturesTimeout <= 0:
		return errors.New("--fixtures-timeout must be positive")
	case s.FixturesFrom == "" && o.given["upstream-api-key"]:
		return errors.New("--upstream-api-key is the key of --fixtures-from, which is not given")
	case s.Watch && o.Spec == "":
		return errors.New("--watch reloads the file of --spec; give --spec FILE")
	case s.Watch && o.storeFlag.kind == storeRedis:
		return errors.New("--watch: replicas sharing a Redis store would serve different contracts; use it with the memory or file store")
	case s.MetricsAddr != "" && !s.Metrics:
		return errors.New("--metrics-addr serves the metrics, which --metrics=false turns off")
	}
	if s.RateLimit != "" {
		var err error
		if s.limit, err = mockserver.ParseRateLimitFlag(s.RateLimit); err != nil {
			return err
		}
	}
	return nil
}
