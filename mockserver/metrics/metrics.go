// Package metrics is what the kit's servers tell a Prometheus scraper, in
// the text exposition of the official client library: the mock's
// requests by operation, status and session kind, their latency, the
// answers forced and faults applied on purpose, store errors and contract
// reloads; the validating proxy's exchanges and contract violations by
// operation and rule.
//
// Every label takes its values from a small set the process knows: the
// contract's operation names ("none" for a request that addressed none),
// status codes, "default" or "named" for the session, the mock's fault
// names, the judge's rule names, the store's method names. No key, no
// session name and no path a client sent is ever a label: the number of
// series is bounded by the contract, not by the traffic.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/spec"
)

// Path is where the mock and the proxy serve the metrics, behind the
// admin key and the admin API's guard (httpapi.AdminGuard).
const Path = "/metrics"

// Namespace prefixes every metric's name.
const Namespace = "inventory_mock"

// NoOperation is the operation label of a request that addressed no
// operation of the contract: a path it does not have, or the server's own
// endpoints (/healthz, /metrics, /__admin/).
const NoOperation = "none"

// Session kinds, the session label.
const (
	SessionDefault = "default"
	SessionNamed   = "named"
)

// Buckets are the latency histograms' upper bounds, in seconds: from half
// a millisecond (the mock's own time) to the longest delay a client may
// ask for.
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics holds one server's collectors in a registry of its own, with
// the Go runtime's and the process's. Its methods are safe for concurrent
// use.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec   // operation, status, session
	duration    *prometheus.HistogramVec // operation
	forced      *prometheus.CounterVec   // operation
	faults      *prometheus.CounterVec   // operation, fault
	storeErrors *prometheus.CounterVec   // method
	reloads     *prometheus.CounterVec   // result

	exchanges        *prometheus.CounterVec   // operation, status
	exchangeDuration *prometheus.HistogramVec // operation
	violations       *prometheus.CounterVec   // operation, rule

	// The series of requests, by their labels, found once: a look-up in
	// a vector hashes every label value on every request. Bounded as the
	// series are.
	counters  sync.Map // series -> prometheus.Counter
	observers sync.Map // operation name -> prometheus.Observer
}

// A series names one series of requests_total.
type series struct {
	operation string
	status    int
	named     bool
}

// New returns a registry with every collector of the kit registered.
func New() *Metrics {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: Buckets}, labels)
	}
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = counter("requests_total",
		"Requests answered, by contract operation (none: no operation), status (0: dropped on purpose) and session kind (default or named).",
		"operation", "status", "session")
	m.duration = histogram("request_duration_seconds",
		"Time from a request's arrival to the end of its answer, by contract operation, latency added on purpose included.",
		"operation")
	m.forced = counter("forced_answers_total",
		"Answers forced instead of served: a Prefer code or example, or a chaos rule's example.",
		"operation")
	m.faults = counter("faults_total",
		"Latency and faults applied on purpose (--latency, --fault, PUT /__admin/chaos, Prefer: delay), by fault: latency, status, reset, empty, truncate or slow.",
		"operation", "fault")
	m.storeErrors = counter("store_errors_total",
		"Calls to the store engine that failed (a missing record is not a failure), by method.",
		"method")
	m.reloads = counter("contract_reloads_total",
		"Edits of the spec seen by --watch, by result: loaded, or refused (the contract in force kept serving).",
		"result")
	m.exchanges = counter("proxy_exchanges_total",
		"Exchanges the validating proxy passed, by contract operation and the backend's status (0: no answer).",
		"operation", "status")
	m.exchangeDuration = histogram("proxy_exchange_duration_seconds",
		"Time from a request's arrival at the proxy to the end of the backend's answer, by contract operation.",
		"operation")
	m.violations = counter("proxy_violations_total",
		"Contract violations the validating proxy saw, by contract operation and rule (see mockserver/proxy/README.md, Rules).",
		"operation", "rule")
	m.reg.MustRegister(m.requests, m.duration, m.forced, m.faults, m.storeErrors, m.reloads,
		m.exchanges, m.exchangeDuration, m.violations,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry, to gather from (tests) or to register
// more collectors in.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format (or another
// the scraper asks for in its Accept header, as the client library
// negotiates it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Observe counts a request once its answer is done, from its Entry: an
// httpapi.After of the server's Front, so it sees the Entry every step
// filled, also for a request whose connection was dropped on purpose.
func (m *Metrics) Observe(_ http.ResponseWriter, _ *http.Request, e *httpapi.Entry) {
	op := operation(e.Op)
	k := series{operation: op, status: e.Status(), named: e.Session != ""}
	c, ok := m.counters.Load(k)
	if !ok {
		session := SessionDefault
		if k.named {
			session = SessionNamed
		}
		c, _ = m.counters.LoadOrStore(k, m.requests.WithLabelValues(op, status(k.status), session))
	}
	c.(prometheus.Counter).Inc()
	o, ok := m.observers.Load(op)
	if !ok {
		o, _ = m.observers.LoadOrStore(op, m.duration.WithLabelValues(op))
	}
	o.(prometheus.Observer).Observe(time.Since(e.Start).Seconds())
	if e.ForcedAnswer {
		m.forced.WithLabelValues(op).Inc()
	}
	if e.Delayed {
		m.faults.WithLabelValues(op, "latency").Inc()
	}
	if e.FaultKind != "" {
		m.faults.WithLabelValues(op, e.FaultKind).Inc()
	}
}

// StoreError counts a store call that failed; method is the Store
// method's name, in lower case (list, get, update, ...).
func (m *Metrics) StoreError(method string) { m.storeErrors.WithLabelValues(method).Inc() }

// Reload counts an edit of the spec, loaded or refused.
func (m *Metrics) Reload(loaded bool) {
	if loaded {
		m.reloads.WithLabelValues("loaded").Inc()
		return
	}
	m.reloads.WithLabelValues("refused").Inc()
}

// Exchange counts one exchange of the proxy: the operation it addressed
// (nil: none), the backend's status (0: no answer), how long it took and
// the violations it showed.
func (m *Metrics) Exchange(op *spec.Operation, backendStatus int, took time.Duration, vs []spec.Violation) {
	name := operation(op)
	m.exchanges.WithLabelValues(name, status(backendStatus)).Inc()
	m.exchangeDuration.WithLabelValues(name).Observe(took.Seconds())
	for _, v := range vs {
		m.violations.WithLabelValues(name, v.Rule).Inc()
	}
}

// operation is the operation label of op.
func operation(op *spec.Operation) string {
	if op == nil {
		return NoOperation
	}
	return op.Name()
}

// statuses are the status labels, made once: 0 and 100 to 599.
var statuses = func() []string {
	s := make([]string, 600)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

// status is the status label of code; "other" for a code outside 0 to
// 599, which no server of the kit sends.
func status(code int) string {
	if code < 0 || code >= len(statuses) {
		return "other"
	}
	return statuses[code]
}
