package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"
	"github.com/petstore/inventory-kit/mockserver/store"

	"bytes"
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// Chaos is the latency and faults the mock adds on purpose, for every
// operation or for one: set by flags at start-up and by PUT /__admin/chaos
// at run time.
type Chaos struct {
	// Seed seeds the draws: the same seed and the same sequence of
	// requests give the same latencies and faults. 0: the seed in force is
	// kept (the --chaos-seed, or the last one given), so rules put without
	// a seed replay as the ones before them did; a random one at start-up
	// if none was given, which GET /__admin/chaos shows so a run can be
	// replayed.
	Seed  int64       `json:"seed"`
	Rules []ChaosRule `json:"rules"`
}

// A ChaosRule is a latency, a fault, or both, for every operation (no
// Operation) or for one. A rule naming an operation wins over one that
// does not.
type ChaosRule struct {
	Operation string `json:"operation,omitempty"` // operationId, or METHOD /path
	// Latency is a fixed delay such as 200ms, or a uniform range such as
	// 50ms-1s.
	Latency string `json:"latency,omitempty"`
	// Fault is one of the Fault* names.
	Fault string `json:"fault,omitempty"`
	// Status is the status of a FaultStatus answer, 400 to 599.
	Status int `json:"status,omitempty"`
	// Probability is the chance a request gets the fault or the example;
	// nil: 1.
	Probability *float64 `json:"probability,omitempty"`
	// Example answers the named example of the operation's responses, as a
	// request's Prefer: example=NAME would, instead of serving the request:
	// a forced answer switched on for every caller. It needs Operation,
	// and takes the place of a fault.
	Example string `json:"example,omitempty"`
}

// The faults. The first three happen before the request is served, so a
// write is not applied; the last two after, so a write is applied and only
// its answer is lost or late. Those two damage whatever answer is sent once
// the latency is over: a success, an Error of validation, a forced answer.
const (
	FaultStatus   = "status"   // an answer with Status and an Error body
	FaultReset    = "reset"    // the connection is reset (TCP RST)
	FaultEmpty    = "empty"    // the connection is closed without an answer
	FaultTruncate = "truncate" // the headers and half the body, then the connection is closed
	FaultSlow     = "slow"     // the body in slowPieces pieces, one every slowEvery
)

var faults = []string{FaultStatus, FaultReset, FaultEmpty, FaultTruncate, FaultSlow}

// faultExample is the fault of a rule that answers an example: it comes
// before the request is served, as a status fault does.
const faultExample = "example"

// How a slow body is sent: in slowPieces pieces of about the same size,
// one every slowEvery, so 1.9 s for any body of 20 bytes or more; a
// shorter body goes one byte every slowEvery.
const (
	slowPieces = 20
	slowEvery  = 100 * time.Millisecond
)

// ParseLatencyFlag reads --latency [OPERATION=]DELAY[-DELAY], such as
// 200ms or updateInventory=50ms-1s.
func ParseLatencyFlag(v string) (ChaosRule, error) {
	op, latency := splitOperation(v)
	if latency == "" {
		return ChaosRule{}, fmt.Errorf("--latency %q: want [OPERATION=]DELAY or DELAY-DELAY, such as 200ms or updateInventory=50ms-1s", v)
	}
	return ChaosRule{Operation: op, Latency: latency}, nil
}

// ParseFaultFlag reads --fault [OPERATION=]FAULT[:STATUS][@PROBABILITY],
// such as reset@0.1 or updateInventory=status:503@0.5.
func ParseFaultFlag(v string) (ChaosRule, error) {
	op, rest := splitOperation(v)
	r := ChaosRule{Operation: op}
	rest, prob, hasProb := strings.Cut(rest, "@")
	fault, status, hasStatus := strings.Cut(rest, ":")
	r.Fault = fault
	if hasStatus {
		n, err := strconv.Atoi(status)
		if err != nil {
			return r, fmt.Errorf("--fault %q: status %q is not a number", v, status)
		}
		r.Status = n
	}
	if hasProb {
		p, err := strconv.ParseFloat(prob, 64)
		if err != nil {
			return r, fmt.Errorf("--fault %q: probability %q is not a number", v, prob)
		}
		r.Probability = &p
	}
	return r, nil
}

// splitOperation splits OPERATION=VALUE; a value alone applies to every
// operation.
func splitOperation(v string) (op, value string) {
	if before, after, ok := strings.Cut(v, "="); ok {
		return strings.TrimSpace(before), strings.TrimSpace(after)
	}
	return "", strings.TrimSpace(v)
}

// A rule is a ChaosRule checked and ready to draw from.
type rule struct {
	lo, hi      time.Duration // latency range; hi 0: none
	fault       string
	status      int
	example     string
	probability float64
}

// A chaos holds the rules in force, the global ones and those of the
// sessions that have their own, and the source of their draws. It is the
// admin API's control of Chaos: get, set, clear and withSessions are
// control's (admin.go).
type chaos struct {
	maxDelay    time.Duration
	maxSessions int         // sessions with rules of their own kept at most
	active      atomic.Bool // any rule is in force: the fast path skips the lock

	mu       sync.Mutex                 // guards names, ops, global and sessions
	names    []string                   // the operations rules may name
	ops      map[string]*spec.Operation // by name
	global   *ruleset
	sessions map[string]*ruleset // by session name
}

// A ruleset is the rules of one scope, global or a session's, and the
// source of their draws.
type ruleset struct {
	cfg     Chaos
	latency map[string]rule // by operation name; "" for every operation
	fault   map[string]rule
	rng     *rand.Rand
	used    time.Time // a session's: when last set or drawn from
}

func newChaos(c *spec.Contract, maxDelay time.Duration) *chaos {
	ch := &chaos{maxDelay: maxDelay, maxSessions: store.DefaultMaxSessions, global: &ruleset{}, sessions: map[string]*ruleset{}}
	ch.use(c)
	ch.set("", Chaos{})
	return ch
}

// use makes rules put from now on name the operations of c. The rules in
// force stay: one naming an operation c does not have matches no request.
func (c *chaos) use(contract *spec.Contract) {
	names, ops := []string{}, map[string]*spec.Operation{}
	for _, op := range contract.Operations {
		names = append(names, op.Name())
		ops[op.Name()] = op
	}
	c.mu.Lock()
	c.names, c.ops = names, ops
	c.mu.Unlock()
}

func (c *chaos) set(session string, cfg Chaos) error {
	c.mu.Lock()
	names, ops := c.names, c.ops
	c.mu.Unlock()
	latency, fault := map[string]rule{}, map[string]rule{}
	for i, r := range cfg.Rules {
		if err := c.check(r, names, ops, latency, fault); err != nil {
			return &RuleError{Rule: i + 1, Operation: r.Operation, Err: err}
		}
	}
	if cfg.Rules == nil {
		cfg.Rules = []ChaosRule{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.global
	if session != "" {
		if old = c.sessions[session]; old == nil {
			old = c.global // a session's first rules replay from the global seed
			if len(c.sessions) >= c.maxSessions {
				delete(c.sessions, leastUsed(c.sessions, "", func(rs *ruleset) time.Time { return rs.used }))
			}
		}
	}
	// Keep the seed in force, so that a replay stays one; the first set,
	// at start-up, draws one.
	cfg.Seed = cmp.Or(cfg.Seed, old.cfg.Seed, rand.Int64N(1<<53-1)+1)
	rs := &ruleset{cfg: cfg, latency: latency, fault: fault, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(cfg.Seed))), used: time.Now()}
	if session == "" {
		c.global = rs
	} else {
		c.sessions[session] = rs
	}
	c.active.Store(len(c.global.cfg.Rules) > 0 || len(c.sessions) > 0)
	return nil
}

func (c *chaos) clear(session string) {
	c.mu.Lock()
	delete(c.sessions, session)
	c.active.Store(len(c.global.cfg.Rules) > 0 || len(c.sessions) > 0)
	c.mu.Unlock()
}

func (c *chaos) withSessions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Sorted(maps.Keys(c.sessions))
}

// check checks one rule against the operations it may name and adds what
// it does to latency and fault, the rules by operation ("" for all of
// them).
func (c *chaos) check(r ChaosRule, names []string, ops map[string]*spec.Operation, latency, fault map[string]rule) error {
	if r.Operation != "" && !slices.Contains(names, r.Operation) {
		return fmt.Errorf("no operation %q in the contract; it has %s", r.Operation, strings.Join(names, ", "))
	}
	if r.Latency == "" && r.Fault == "" && r.Example == "" {
		return errors.New("give a latency, a fault, or both; or an example")
	}
	if r.Latency != "" {
		lo, hi, err := parseLatency(r.Latency, c.maxDelay)
		if err != nil {
			return err
		}
		if _, dup := latency[r.Operation]; dup {
			return errors.New("a second latency for the same operations")
		}
		latency[r.Operation] = rule{lo: lo, hi: hi}
	}
	if r.Fault != "" || r.Example != "" {
		f := rule{fault: r.Fault, status: r.Status, probability: 1}
		if r.Probability != nil {
			f.probability = *r.Probability
		}
		switch {
		case r.Example != "":
			if err := checkExample(ops, r); err != nil {
				return err
			}
			f.fault, f.example = faultExample, r.Example
		case !slices.Contains(faults, r.Fault):
			return fmt.Errorf("fault %q: want one of %s", r.Fault, strings.Join(faults, ", "))
		case r.Fault == FaultStatus && (r.Status < 400 || r.Status > 599):
			return errors.New("a status fault needs a status from 400 to 599, such as status:503")
		case r.Fault != FaultStatus && r.Status != 0:
			return errors.New("only a status fault takes a status")
		}
		if f.probability < 0 || f.probability > 1 || f.probability != f.probability {
			return fmt.Errorf("probability %v: want a number from 0 to 1", f.probability)
		}
		if _, dup := fault[r.Operation]; dup {
			return errors.New("a second fault or example for the same operations")
		}
		fault[r.Operation] = f
	}
	return nil
}

// A RuleError is a chaos rule that cannot be put in force: the rule's
// number (from 1) and operation, and why. --latency and --fault name the
// flag that gave the rule by it.
type RuleError struct {
	Rule      int
	Operation string
	Err       error
}

func (e *RuleError) Error() string {
	where := fmt.Sprintf("rule %d", e.Rule)
	if e.Operation != "" {
		where += " (" + e.Operation + ")"
	}
	return where + ": " + e.Err.Error()
}

func (e *RuleError) Unwrap() error { return e.Err }

// checkExample checks an example rule: it names one operation, no fault,
// and an example of that operation's responses under a numeric status,
// which is what its answer is sent with.
func checkExample(ops map[string]*spec.Operation, r ChaosRule) error {
	switch {
	case r.Fault != "":
		return fmt.Errorf("give a fault or an example, not both")
	case r.Status != 0:
		return fmt.Errorf("an example is answered with the status of its response; give no status")
	}
	op := ops[r.Operation]
	if op == nil {
		return fmt.Errorf("example %q: name the operation whose example it is", r.Example)
	}
	for _, resp := range op.Responses {
		if resp.Example(r.Example) == nil {
			continue
		}
		if _, err := strconv.Atoi(resp.Code); err != nil {
			return fmt.Errorf("example %q belongs to the %s response of %s, which has no status to answer with", r.Example, resp.Code, op.Name())
		}
		if ex := resp.Example(r.Example); len(ex.Problems) > 0 {
			return fmt.Errorf("example %q of %s does not match the contract (%s); update or remove it in the spec", r.Example, op.Name(), spec.Join(ex.Problems))
		}
		return nil
	}
	return fmt.Errorf("example %q: %s has no example of that name; it has %s", r.Example, op.Name(), exampleNames(op))
}

func (c *chaos) get(session string) (Chaos, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs := c.sessions[session]; session != "" && rs != nil {
		return rs.cfg, true
	}
	return c.global.cfg, false
}

// parseLatency reads 200ms or 50ms-1s.
func parseLatency(s string, maxDelay time.Duration) (lo, hi time.Duration, err error) {
	a, b, isRange := strings.Cut(s, "-")
	if !isRange {
		b = a
	}
	lo, err1 := time.ParseDuration(strings.TrimSpace(a))
	hi, err2 := time.ParseDuration(strings.TrimSpace(b))
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("latency %q: want a duration such as 200ms, or a range such as 50ms-1s", s)
	case lo < 0 || hi < lo:
		return 0, 0, fmt.Errorf("latency %q: want 0 <= low <= high", s)
	case hi > maxDelay:
		return 0, 0, fmt.Errorf("latency %q: longer than the mock's cap of %s (--max-delay)", s, maxDelay)
	}
	return lo, hi, nil
}

// A draw is what chaos does to one request.
type draw struct {
	delay   time.Duration
	fault   string
	status  int
	example string          // the example a faultExample answers
	op      *spec.Operation // the operation of the example
}

// String renders the draw for the journal and the access log.
func (d draw) String() string {
	var parts []string
	if d.delay > 0 {
		parts = append(parts, "latency "+d.delay.Round(time.Millisecond).String())
	}
	switch {
	case d.fault == FaultStatus:
		parts = append(parts, "fault status "+strconv.Itoa(d.status))
	case d.fault == faultExample:
		parts = append(parts, "forced example="+d.example)
	case d.fault != "":
		parts = append(parts, "fault "+d.fault)
	}
	return strings.Join(parts, ", ")
}

// draw decides the latency and fault of one request of op in session.
// For each of the two, a rule of the session's own for op wins, then one
// of the session's for every operation, then a global one for op, then a
// global one for every operation.
func (c *chaos) draw(op *spec.Operation, session string) draw {
	if !c.active.Load() {
		return draw{}
	}
	name := op.Name()
	c.mu.Lock()
	defer c.mu.Unlock()
	sets := []*ruleset{c.global}
	if rs := c.sessions[session]; rs != nil {
		rs.used = time.Now()
		sets = []*ruleset{rs, c.global}
	}
	var d draw
	if l, rs := find(sets, name, func(rs *ruleset) map[string]rule { return rs.latency }); rs != nil {
		d.delay = l.lo
		if l.hi > l.lo {
			d.delay += time.Duration(rs.rng.Int64N(int64(l.hi-l.lo) + 1))
		}
	}
	if f, rs := find(sets, name, func(rs *ruleset) map[string]rule { return rs.fault }); rs != nil && (f.probability >= 1 || rs.rng.Float64() < f.probability) {
		d.fault, d.status = f.fault, f.status
		if f.example != "" {
			d.example, d.op = f.example, op
		}
	}
	return d
}

// find returns the first rule of sets, in order, for the operation name
// or else for every operation, and the set it is from; nil if none.
func find(sets []*ruleset, name string, rules func(*ruleset) map[string]rule) (rule, *ruleset) {
	for _, rs := range sets {
		m := rules(rs)
		if r, ok := m[name]; ok {
			return r, rs
		}
		if r, ok := m[""]; ok {
			return r, rs
		}
	}
	return rule{}, nil
}

// before applies the part of a draw that comes before the request is
// served; it reports false if it answered (or dropped) the request.
func (d draw) before(w http.ResponseWriter, r *http.Request) bool {
	if d.delay > 0 && !sleep(r, d.delay) {
		return false
	}
	switch d.fault {
	case faultExample:
		answerForced(w, r, d.op, preference{example: d.example})
		return false
	case FaultStatus:
		httpapi.WriteError(w, r, d.status, codeFor(d.status), fmt.Sprintf("fault injected by the mock's chaos rules: status %d", d.status))
		return false
	case FaultReset, FaultEmpty:
		abort(w, r, d.fault == FaultReset)
		return false
	}
	return true
}

// after wraps w for a fault that damages the answer once the request has
// been served, and returns the function that sends it; nil if none.
func (d draw) after(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func()) {
	if d.fault != FaultTruncate && d.fault != FaultSlow {
		return w, nil
	}
	b := &bufferedWriter{ResponseWriter: w}
	return b, func() { b.send(r, d.fault) }
}

// sleep waits d, or until the client gives up; it reports whether the
// client is still there.
func sleep(r *http.Request, d time.Duration) bool {
	select {
	case <-time.After(d): // collected once it fires or is unreachable
		return true
	case <-r.Context().Done():
		return false
	}
}

// abort drops the connection without an answer: reset sends a TCP RST,
// also under TLS (the TCP connection beneath is reset, with no TLS
// close_notify first), otherwise the connection is closed. Where the
// connection cannot be taken over (HTTP/2), the stream is reset
// (RST_STREAM INTERNAL_ERROR) for both, and the connection lives on.
func abort(w http.ResponseWriter, r *http.Request, reset bool) {
	httpapi.EntryOf(r).Aborted = true
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if !reset {
		conn.Close()
		return
	}
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		tcp.SetLinger(0)
	}
	conn.Close()
}

// A bufferedWriter keeps an answer to send it damaged.
type bufferedWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

// Unwrap lets http.ResponseController reach the writer beneath.
func (b *bufferedWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// send writes the kept answer with its fault: truncate sends the headers
// (with the whole Content-Length) and half the body, then drops the
// connection; slow sends the body in slowPieces pieces (of one byte each
// for a shorter body), one every slowEvery.
func (b *bufferedWriter) send(r *http.Request, fault string) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	body := b.body.Bytes()
	b.ResponseWriter.Header().Set("Content-Length", strconv.Itoa(len(body)))
	b.ResponseWriter.WriteHeader(b.status)
	rc := http.NewResponseController(b.ResponseWriter)
	if fault == FaultTruncate {
		b.ResponseWriter.Write(body[:len(body)/2])
		rc.Flush()
		panic(http.ErrAbortHandler)
	}
	pieces := min(slowPieces, len(body))
	for i := range pieces {
		if _, err := b.ResponseWriter.Write(body[i*len(body)/pieces : (i+1)*len(body)/pieces]); err != nil {
			return
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return
		}
		if i < pieces-1 && !sleep(r, slowEvery) {
			return
		}
	}
}
