package spec

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// Defaults of FindingsOptions.
const (
	DefaultMaxGroups    = 1000
	DefaultExampleLimit = 4 << 10
)

// FindingsOptions bound and direct what Findings keeps and writes.
type FindingsOptions struct {
	// Redactor hides the configured keys wherever they appear; the
	// credentials each exchange carries, and those of recent exchanges,
	// are hidden besides. Nil: only those.
	Redactor *exchange.Redactor
	// JSONL, if not nil, gets one JSON line per violation as it is
	// recorded; the first of each group holds the example.
	JSONL io.Writer
	// MaxGroups bounds the groups kept; past it, new groups are counted in
	// Dropped only. 0: DefaultMaxGroups.
	MaxGroups int
	// ExampleLimit is the bytes of each body an example keeps (0: the default).
	ExampleLimit int
	// OnNew, if not nil, is called with each new group, outside any lock.
	OnNew func(Finding)
	// KeyVar, if set, is the environment variable a replay reads the API
	// key from (exchange.APIKeyVar): for a proxy, an example's bearer token
	// is shown as $KeyVar (Redactor.RememberKey), unless the answer was 401,
	// which says the token was not a key.
	KeyVar string
}

// Findings groups the violations recorded from many exchanges: identical
// ones (same operation, rule, side, place and, for the answer, status) are
// one Finding with a count. It counts the exchanges of each operation too,
// so a report can tell "checked, no violation" from "not seen", and their
// answers by status, for coverage. It is safe for concurrent use.
type Findings struct {
	opts    FindingsOptions
	traffic map[string]*atomic.Int64 // exchanges per operation name
	unknown atomic.Int64             // exchanges that matched no operation
	answers *Answers                 // answers per operation and status

	mu       sync.Mutex // guards groups, order, dropped, buffered, jsonl and jsonlErr
	groups   map[string]*Finding
	order    []*Finding
	dropped  int64
	buffered *bufio.Writer // of the JSON lines, flushed after each exchange
	jsonl    *json.Encoder
	jsonlErr error
}

// A Finding is a group of identical violations: the JSON shape of GET
// /__admin/violations, of the JSON lines, and of the JUnit report's
// failures.
type Finding struct {
	ID        string         `json:"id"` // stable: the same violation has the same id in every run
	Operation string         `json:"operation"`
	Rule      string         `json:"rule"`
	Severity  string         `json:"severity"`
	Where     string         `json:"where"`
	Path      string         `json:"path"` // array indices as [*]: $[*].status
	Message   string         `json:"message"`
	Status    int            `json:"status,omitempty"` // the answer's status, for violations of the answer
	Count     int64          `json:"count"`
	FirstSeen time.Time      `json:"firstSeen"`
	LastSeen  time.Time      `json:"lastSeen"`
	Example   FindingExample `json:"example"` // the first exchange that showed it, secrets redacted
}

// A FindingExample is one exchange as a finding shows it.
type FindingExample struct {
	Method   string         `json:"method"`
	URL      string         `json:"url"`
	Status   int            `json:"status"`
	Request  FindingMessage `json:"request"`
	Response FindingMessage `json:"response"`
}

// A FindingMessage is one side of an example: headers and the start of the body.
type FindingMessage struct {
	Headers   map[string][]string `json:"headers"`
	Body      string              `json:"body"`
	Bytes     int64               `json:"bytes"`               // the whole body's length
	Truncated bool                `json:"truncated,omitempty"` // Body holds less than Bytes
}

// NewFindings returns an empty set of findings for traffic to c.
func NewFindings(c *Contract, opts FindingsOptions) *Findings {
	if opts.MaxGroups <= 0 {
		opts.MaxGroups = DefaultMaxGroups
	}
	if opts.ExampleLimit <= 0 {
		opts.ExampleLimit = DefaultExampleLimit
	}
	f := &Findings{opts: opts, traffic: map[string]*atomic.Int64{}, groups: map[string]*Finding{}, answers: NewAnswers(c)}
	for _, op := range c.Operations {
		f.traffic[op.Name()] = new(atomic.Int64)
	}
	if opts.JSONL != nil {
		f.buffered = bufio.NewWriter(opts.JSONL)
		f.jsonl = json.NewEncoder(f.buffered)
	}
	return f
}

// indices matches array indices in a path, which a group ignores.
var indices = regexp.MustCompile(`\[[0-9]+\]`)

// Record counts an exchange of the named operation and groups its
// violations. The example and messages kept have x's secrets redacted.
func (f *Findings) Record(x *exchange.Exchange, operation string, vs []Violation) {
	// Counted last, so that whoever sees the count sees the violations.
	defer f.count(operation)
	f.answers.Count(operation, x.Status)
	if len(vs) == 0 {
		return
	}
	var rd *exchange.Redactor
	if f.opts.KeyVar != "" && x.Status != http.StatusUnauthorized {
		rd = f.opts.Redactor.RememberKey(x, f.opts.KeyVar)
	} else {
		rd = f.opts.Redactor.Remember(x)
	}
	url := rd.URL(x.URL)
	now := x.Time
	if now.IsZero() {
		now = time.Now()
	}
	var example *FindingExample
	var added []Finding
	f.mu.Lock()
	for _, v := range vs {
		path := indices.ReplaceAllString(v.Path, "[*]")
		status := 0
		if v.Where == WhereResponse {
			status = x.Status
		}
		key := v.Operation + "\x00" + v.Rule + "\x00" + v.Where + "\x00" + path + "\x00" + strconv.Itoa(status)
		g := f.groups[key]
		first := false
		switch {
		case g != nil:
			g.Count++
			g.LastSeen = now
		case len(f.groups) >= f.opts.MaxGroups:
			f.dropped++
		default:
			if example == nil {
				example = f.example(x, rd, url)
			}
			sum := sha256.Sum256([]byte(key))
			g = &Finding{
				ID: hex.EncodeToString(sum[:6]), Operation: rd.String(v.Operation), Rule: v.Rule, Severity: Severity(v.Rule),
				Where: v.Where, Path: path, Message: rd.String(v.Message), Status: status,
				Count: 1, FirstSeen: now, LastSeen: now, Example: *example,
			}
			f.groups[key] = g
			f.order = append(f.order, g)
			added = append(added, *g)
			first = true
		}
		if f.jsonl != nil {
			f.writeLine(v, g, rd, url, x, now, first)
		}
	}
	if f.jsonl != nil && f.jsonlErr == nil {
		f.jsonlErr = f.buffered.Flush()
	}
	f.mu.Unlock()
	if f.opts.OnNew != nil {
		for _, g := range added {
			f.opts.OnNew(g)
		}
	}
}

func (f *Findings) count(operation string) {
	if n := f.traffic[operation]; n != nil {
		n.Add(1)
	} else {
		f.unknown.Add(1)
	}
}

// example renders x with its secrets redacted and its bodies cut to the
// example limit; redaction comes first, so a cut never leaves part of a
// secret.
func (f *Findings) example(x *exchange.Exchange, rd *exchange.Redactor, url string) *FindingExample {
	message := func(h http.Header, b []byte, size int64) FindingMessage {
		cut := rd.Cut(b, f.opts.ExampleLimit)
		return FindingMessage{Headers: rd.Header(h), Body: string(cut), Bytes: max(size, int64(len(b))),
			Truncated: size > int64(len(b)) || len(rd.Bytes(b)) > len(cut)}
	}
	return &FindingExample{Method: rd.String(x.Method), URL: url, Status: x.Status,
		Request: message(x.Header, x.Body, x.BodySize), Response: message(x.RespHeader, x.RespBody, x.RespSize)}
}

// A line is one violation as the JSON lines report writes it.
type line struct {
	Time      time.Time       `json:"time"`
	ID        string          `json:"id,omitempty"` // empty when the group was dropped
	Operation string          `json:"operation"`
	Rule      string          `json:"rule"`
	Severity  string          `json:"severity"`
	Where     string          `json:"where"`
	Path      string          `json:"path"`
	Message   string          `json:"message"`
	Method    string          `json:"method"`
	URL       string          `json:"url"`
	Status    int             `json:"status,omitempty"`
	Count     int64           `json:"count,omitempty"` // the group's count so far
	Example   *FindingExample `json:"example,omitempty"`
}

// writeLine writes one violation to the JSON lines report. f.mu is held.
func (f *Findings) writeLine(v Violation, g *Finding, rd *exchange.Redactor, url string, x *exchange.Exchange, now time.Time, first bool) {
	if f.jsonlErr != nil {
		return
	}
	l := line{Time: now.UTC(), Operation: rd.String(v.Operation), Rule: v.Rule, Severity: Severity(v.Rule), Where: v.Where,
		Path: v.Path, Message: rd.String(v.Message), Method: rd.String(x.Method), URL: url, Status: x.Status}
	if g != nil {
		l.ID, l.Count = g.ID, g.Count
		if first {
			l.Example = &g.Example
		}
	}
	f.jsonlErr = f.jsonl.Encode(l)
}

// List returns the findings, oldest group first.
func (f *Findings) List() []Finding {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Finding, len(f.order))
	for i, g := range f.order {
		out[i] = *g
	}
	return out
}

// Clear forgets every finding; the traffic counts stay.
func (f *Findings) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.groups)
	f.order = nil
	f.dropped = 0
}

// Dropped returns the violations not grouped because MaxGroups was reached.
func (f *Findings) Dropped() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dropped
}

// Errors returns the number of violations of error severity, counting each
// group's every occurrence, and the dropped ones.
func (f *Findings) Errors() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.dropped
	for _, g := range f.order {
		if g.Severity == SeverityError {
			n += g.Count
		}
	}
	return n
}

// Traffic returns the exchanges counted for each operation of the
// contract, by name, and those that matched none.
func (f *Findings) Traffic() (byOperation map[string]int64, unknown int64) {
	byOperation = make(map[string]int64, len(f.traffic))
	for name, n := range f.traffic {
		byOperation[name] = n.Load()
	}
	return byOperation, f.unknown.Load()
}

// Answers returns the answers counted, by operation name and status.
func (f *Findings) Answers() map[string]map[int]int64 { return f.answers.ByStatus() }

// Err returns the first error writing the JSON lines report, if any.
func (f *Findings) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jsonlErr
}

// Redactor returns the redactor Record hides secrets with: the
// configured keys; For and Remember add an exchange's own.
func (f *Findings) Redactor() *exchange.Redactor { return f.opts.Redactor }
