package main

import (
	"strconv"
	"strings"
	"time"
)

// benchKey is the API key both servers accept during a run.
const benchKey = "inventory-bench-key"

// A scenario is one kind of load, run against the mock and the baseline.
type scenario struct {
	name  string
	about string
	pets  int // 0: the default fixtures (64 pets); else --generate pets
	// rpsTarget is the least ratio of requests per second (mock/baseline,
	// or proxy/mock) the issues ask for; 0 where they set none.
	rpsTarget float64
	// proxy makes the two servers inventory-mock --proxy-to the mock, and
	// that mock; with bare, a bare httputil.ReverseProxy (this binary's
	// bare-proxy mode) instead of inventory-mock, for scale.
	proxy, bare bool
	// p50Added is the most a proxy may add to the median latency; 0: no
	// target.
	p50Added time.Duration
	// store, if set, makes this a scenario of a store engine: the mock runs
	// with --store on that engine (file or redis, which the bench makes or
	// starts), against the mock on memory (versus). The p99 target of the
	// baseline comparison does not apply.
	store string
	// requests returns the n-th request of client c against addr.
	requests func(addr string) func(c, n int) request
	// baseRequests, if set, are the requests of the other side, where they
	// differ from the mock's.
	baseRequests func(addr string) func(c, n int) request
	// versus, if set, replaces the bare baseline by the mock itself with
	// other flags: the scenario then measures what those flags cost.
	versus *variant
	// maxRSS is the most resident memory the mock may hold after the
	// rounds; 0: no target.
	maxRSS int64
}

// A variant is the mock run with other flags, as the other side of a
// scenario.
type variant struct {
	name string
	args []string
}

// p99Target is the largest mock/baseline ratio of p99 latency the
// performance issue allows, in every load scenario.
const p99Target = 1.5

// startupName is the name of the start-up and memory measurement, which
// --scenarios takes like a load scenario.
const startupName = "startup"

var scenarios = []scenario{
	{
		name: "list", about: "GET /v1/inventory, default fixtures (64 pets)", rpsTarget: 0.8,
		requests: lists,
	},
	{
		name: "list-10k", about: "GET /v1/inventory, 10,000 pets", pets: 10_000,
		requests: lists,
	},
	{
		name: "list-100k", about: "GET /v1/inventory, 100,000 pets", pets: 100_000, rpsTarget: 0.8,
		requests: lists,
	},
	{
		name: "update", about: "PATCH /v1/inventory/{petId} with {\"quantity\":N}, 64 pets", rpsTarget: 0.8,
		requests: updates,
	},
	{
		name: "mix", about: "90% list, 10% update, 64 pets",
		requests: oneIn10(updates, lists),
	},
	{
		name: "mix-100k", about: "90% list, 10% update, 100,000 pets", pets: 100_000,
		requests: oneIn10(updatesOf(func(c, n int) int { return (c*7919+n)%100_000 + 1 }), lists),
	},
	{name: "list-file", about: "GET /v1/inventory, 64 pets: the mock on --store file against the mock on memory", store: "file", versus: onMemory, rpsTarget: 0.5, requests: lists},
	{name: "update-file", about: "PATCH /v1/inventory/{petId}, 64 pets: the mock on --store file against the mock on memory", store: "file", versus: onMemory, rpsTarget: 0.3, requests: updates},
	{name: "list-redis", about: "GET /v1/inventory, 64 pets: the mock on --store redis against the mock on memory", store: "redis", versus: onMemory, rpsTarget: 0.5, requests: lists},
	{name: "update-redis", about: "PATCH /v1/inventory/{petId}, 64 pets: the mock on --store redis against the mock on memory", store: "redis", versus: onMemory, rpsTarget: 0.3, requests: updates},
	{
		name: "errors", about: "half 401 (GET with an unknown key), half 400 (PATCH with a string quantity)", rpsTarget: 0.8,
		requests: func(addr string) func(c, n int) request {
			unauthorized := request{raw: get(addr, "/v1/inventory", "wrong-key"), status: 401}
			bad := request{raw: patch(addr, "/v1/inventory/3", benchKey, `{"quantity":"many"}`), status: 400}
			return func(c, n int) request {
				if n%2 == 0 {
					return unauthorized
				}
				return bad
			}
		},
	},
	{
		name: "proxy-list", about: "GET /v1/inventory (64 pets) through the validating proxy in front of the mock, against the mock directly",
		proxy: true, rpsTarget: 0.5, p50Added: time.Millisecond,
		requests: lists,
	},
	{
		name: "proxy-update", about: "PATCH /v1/inventory/{petId} (64 pets) through the validating proxy in front of the mock, against the mock directly",
		proxy: true, rpsTarget: 0.5, p50Added: time.Millisecond,
		requests: updates,
	},
	{
		name: "bare-proxy-list", about: "GET /v1/inventory (64 pets) through a bare httputil.ReverseProxy (no checks, no log) in front of the mock, against the mock directly: the cost of the hop alone",
		proxy: true, bare: true,
		requests: lists,
	},
	{
		name: "bare-proxy-update", about: "PATCH /v1/inventory/{petId} (64 pets) through a bare httputil.ReverseProxy (no checks, no log) in front of the mock, against the mock directly: the hop alone, the scale of proxy-update",
		proxy: true, bare: true,
		requests: updates,
	},
	{
		name: "update-journal", about: "PATCH as in update, the mock with its journal (the default, 100 requests per session) against the mock with --journal-size 0",
		rpsTarget: 0.85, versus: &variant{name: "mock without journal", args: []string{"--journal-size", "0"}},
		requests: updates,
	},
	{
		name: "update-sessions", about: "PATCH as in update, each client in its own of 32 sessions (X-Mock-Session), against the mock with every client on the default session",
		versus: &variant{name: "mock, default session"},
		requests: func(addr string) func(c, n int) request {
			update := updates(addr)
			return func(c, n int) request {
				r := update(c, n)
				r.raw = withSession(r.raw, "bench-"+strconv.Itoa(c))
				return r
			}
		},
		baseRequests: updates,
	},
	{
		name: "list-metrics", about: "GET /v1/inventory as in list, the mock with its metrics (the default) against the mock with --metrics=false",
		rpsTarget: 0.97, versus: noMetrics, requests: lists,
	},
	{
		name: "update-metrics", about: "PATCH as in update, the mock with its metrics (the default) against the mock with --metrics=false",
		rpsTarget: 0.97, versus: noMetrics, requests: updates,
	},
	{
		name: "update-1m", about: "PATCH of random pets among 1,000,000; the mock's resident memory after the rounds", pets: 1_000_000,
		maxRSS:   250 << 20,
		requests: updatesOf(amongMillion),
	},
	{
		name: "writes-1m", about: "90% PATCH, 10% list of 1,000,000 pets; the mock's resident memory after the rounds", pets: 1_000_000,
		maxRSS:   250 << 20,
		requests: oneIn10(lists, updatesOf(amongMillion)),
	},
}

// onMemory is the mock on the memory store, the other side of the store
// engines' scenarios.
var onMemory = &variant{name: "memory"}

// noMetrics is the mock without its metrics, the other side of the
// metrics' scenarios: what counting every request costs.
var noMetrics = &variant{name: "mock without metrics", args: []string{"--metrics=false"}}

// withSession adds an X-Mock-Session header to a raw request.
func withSession(raw []byte, session string) []byte {
	head, body, _ := strings.Cut(string(raw), "\r\n\r\n")
	return []byte(head + "\r\nX-Mock-Session: " + session + "\r\n\r\n" + body)
}

// lists sends GET /v1/inventory, over and over.
func lists(addr string) func(c, n int) request {
	r := listRequest(addr, benchKey)
	return func(int, int) request { return r }
}

// updates sets the quantity of one of 64 pets, a different one for each
// client at a time.
var updates = updatesOf(func(c, n int) int { return (c*7+n)%64 + 1 })

// amongMillion spreads the updates of the 1,000,000-pet scenarios.
func amongMillion(c, n int) int { return (c*7919+n*104729)%1_000_000 + 1 }

// updatesOf sets the quantity of the pet pet(c, n) names.
func updatesOf(pet func(c, n int) int) func(addr string) func(c, n int) request {
	return func(addr string) func(c, n int) request {
		return func(c, n int) request { return updateRequest(addr, benchKey, int64(pet(c, n)), n%1000) }
	}
}

// oneIn10 sends the tenth of every ten requests from tenth, the others from rest.
func oneIn10(tenth, rest func(addr string) func(c, n int) request) func(addr string) func(c, n int) request {
	return func(addr string) func(c, n int) request {
		t, r := tenth(addr), rest(addr)
		return func(c, n int) request {
			if n%10 == 9 {
				return t(c, n)
			}
			return r(c, n)
		}
	}
}

func listRequest(addr, key string) request {
	return request{raw: get(addr, "/v1/inventory", key), status: 200}
}

func updateRequest(addr, key string, petID int64, quantity int) request {
	body := `{"quantity":` + strconv.Itoa(quantity) + `}`
	return request{raw: patch(addr, "/v1/inventory/"+strconv.FormatInt(petID, 10), key, body), status: 200}
}

func get(addr, path, key string) []byte {
	return []byte("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key + "\r\n\r\n")
}

func patch(addr, path, key, body string) []byte {
	return []byte("PATCH " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + key +
		"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}
