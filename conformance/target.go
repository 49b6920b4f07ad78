package conformance

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// Defaults of Config's limits.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultRestoreDeadline  = 5 * time.Second
	DefaultMaxResponseBytes = 16 << 20 // 16 MiB decompressed per response
	DefaultMaxRunBytes      = 2 << 30  // 2 GiB decompressed over a run
	DefaultMaxRetryWait     = 30 * time.Second
	// DefaultWorkers is how many requests the suite has in flight at
	// once where it may: against a target 30 ms away, 8 keep a run of the
	// whole suite under 20 s.
	DefaultWorkers = 8
	// ItemMaxBytes caps answers that are one record or an Error: 1 MiB.
	ItemMaxBytes = 1 << 20
	// goneAfter is how many requests in a row may go unanswered before
	// the target is declared gone and the run stops.
	goneAfter = 3
)

// Config says which implementation to check and how far the suite may go.
type Config struct {
	BaseURL        string         // the environment address, ending in the contract's base path (/v1)
	APIKey         string         // sent as "Authorization: Bearer <key>"; never shown
	KeyCommand     string         // a shell command that prints the key: run at the start (APIKey unused) and again when the target answers 401 to a key that worked
	Headers        http.Header    // extra headers sent with every request (a tenant, a version, a cookie); their values are never shown
	Contract       *spec.Contract // nil: the embedded contract
	AllowMutations bool           // run the checks that write
	PetID          int64          // the one record the run writes to (checks and exploration); 0: the checks the first listed, the exploration any
	Strict         bool           // a warning (what only HTTP's RFCs require) fails its check
	Timeout        time.Duration  // per request; 0: DefaultTimeout
	CACertFile     string         // extra PEM roots for the target's certificate
	InsecureTLS    bool           // skip verification of the target's certificate
	Client         *http.Client   // nil: one built from Timeout, CACertFile and InsecureTLS
	Workers        int            // requests in flight at once where the suite may; 0: DefaultWorkers
	MaxRunTime     time.Duration  // the whole run at most, then it stops (the reports say so); 0: no bound

	MaxResponseBytes int64         // cap on one decompressed response body; 0: DefaultMaxResponseBytes
	MaxRunBytes      int64         // cap on all decompressed response bodies of a run; 0: DefaultMaxRunBytes
	MaxRetryWait     time.Duration // total wait on 429 answers over a run; 0: DefaultMaxRetryWait
	RestoreDeadline  time.Duration // how long a restore's read-back may take to show it; 0: DefaultRestoreDeadline

	Explore ExploreConfig

	Secrets *Secrets  // the values no output shows; the key and the header values are always added
	Trace   io.Writer // receives every exchange as it happens (--verbose); nil: none
	Stderr  io.Writer // messages that must be seen at once (a failed restore), redacted; nil: os.Stderr
}

// A Target is a prepared implementation under test, and what a check
// runs on: its Client sends and records, its Records hold the records
// the run protects and restores, its Bodies build what a check sends, and
// its own methods give a check its verdict (README: Writing a check). It
// is safe for concurrent use.
type Target struct {
	*Client
	*Records
	Bodies
	cfg      Config
	contract *spec.Contract
	inv      *spec.Inventory
	judge    *spec.Judge
	stop     *stopper // the run's stop; its Client's too
	lists    atomic.Pointer[listed]
}

// A SetupError says why a run could not be made: bad configuration, an
// unreachable target, or a key the target rejects.
type SetupError struct{ Msg string }

// Error returns the message.
func (e *SetupError) Error() string { return e.Msg }

func setupErrorf(format string, args ...any) *SetupError {
	return &SetupError{Msg: fmt.Sprintf(format, args...)}
}

// NewTarget checks cfg and reads the contract's inventory without calling the
// target: enough to list the checks (--list). Any error is a *SetupError.
func NewTarget(cfg Config) (*Target, error) {
	contract := cfg.Contract
	if contract == nil {
		var err error
		if contract, err = spec.Shared(); err != nil {
			return nil, setupErrorf("loading the contract: %v", err)
		}
	}
	inv, err := contract.Inventory()
	if err != nil {
		return nil, setupErrorf("the contract: %v", err)
	}
	base, err := url.Parse(strings.TrimSuffix(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, setupErrorf("--base-url %s: want an http or https address such as https://staging.example.com%s", exchange.Quote(cfg.BaseURL), contract.BasePath)
	}
	orDefault(&cfg.RestoreDeadline, DefaultRestoreDeadline)
	orDefault(&cfg.Timeout, DefaultTimeout)
	orDefault(&cfg.MaxResponseBytes, DefaultMaxResponseBytes)
	orDefault(&cfg.MaxRunBytes, DefaultMaxRunBytes)
	orDefault(&cfg.MaxRetryWait, DefaultMaxRetryWait)
	orDefault(&cfg.Workers, DefaultWorkers)
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.Secrets == nil {
		cfg.Secrets = NewSecrets()
	}
	cfg.Secrets.Add(KeySecret(cfg.APIKey))
	for name, vs := range cfg.Headers {
		for _, v := range vs {
			cfg.Secrets.Add(HeaderSecret(name, v))
		}
	}
	switch cfg.Stderr.(type) {
	case *Output, *exchange.RedactingWriter:
	default:
		cfg.Stderr = cfg.Secrets.Writer(cfg.Stderr)
	}
	cfg.Explore = cfg.Explore.withDefaults()
	t := &Target{Bodies: Bodies{inv}, cfg: cfg, contract: contract, inv: inv, judge: spec.NewJudge(contract, nil), stop: &stopper{}}
	t.stop.init(cfg.MaxRunTime)
	if t.Client, err = newClient(cfg, contract, inv, base, t.stop); err != nil {
		return nil, err
	}
	t.Records = &Records{client: t.Client, bodies: t.Bodies, pending: map[int64]Record{}, written: map[int64]Record{}, why: map[int64]string{}}
	return t, nil
}

// Prepare is NewTarget, then the first list calls with the key. Any
// error it returns is a *SetupError: the configuration, the target's
// address or the key is wrong. A list that answers but breaks the
// contract, or changes with no write, is no setup error: one check fails
// for it and the checks it leaves nothing to judge say so.
func Prepare(ctx context.Context, cfg Config) (*Target, error) {
	t, err := NewTarget(cfg)
	if err != nil {
		return nil, err
	}
	if err := t.prepare(ctx); err != nil {
		t.stop.end()
		return nil, err
	}
	return t, nil
}

// prepare gets the key and makes the first list calls: the first decides
// whether a run can be made and which record the checks write to, the
// second whether the target holds its records still.
func (t *Target) prepare(ctx context.Context) error {
	cfg, inv, contract := t.cfg, t.inv, t.contract
	if cfg.KeyCommand != "" {
		if err := t.keys.fetch(ctx); err != nil {
			return setupErrorf("%v", err)
		}
	}
	if t.Key() == "" {
		return setupErrorf("no API key: pass --api-key, set INVENTORY_API_KEY or pass --api-key-command")
	}
	x := t.Send(ctx, Request{Method: inv.List.Method, Path: inv.List.Path})
	switch {
	case x.Failure == exchange.FailureNoAnswer:
		return setupErrorf("%s", unreachable(x))
	case x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden:
		return setupErrorf("the API key was rejected: a plain GET %s answered %d, so every check would fail on it; pass a key this target accepts with --api-key, INVENTORY_API_KEY or --api-key-command (inventory-mock accepts the keys of its --api-keys, or, given none, the development key its start-up log names)", x.URL, x.Status)
	case x.Status == http.StatusNotFound:
		return setupErrorf("GET %s answered 404: check --base-url, which should end in %s", x.URL, contract.BasePath)
	case x.Status == http.StatusBadRequest && bytes.Contains(x.RespBody, []byte("HTTP request to an HTTPS server")):
		return setupErrorf("GET %s answered 400 %q: the target speaks HTTPS; use https:// in --base-url", x.URL, bytes.TrimSpace(x.RespBody))
	case notTheAPI(x) != "":
		return setupErrorf("GET %s answered %d with %s: this is not the API; check --base-url (a web page, a login page or a proxy's error page answers here, not the service)", x.URL, x.Status, notTheAPI(x))
	}
	what := fmt.Sprintf("GET %s answered %d", x.URL, x.Status)
	switch ix, err := DecodeList(ctx, x.RespBody, inv.Key); {
	case x.Failure != "":
		t.listBroken = fmt.Sprintf("%s, then the answer failed (%s: %s)", what, x.Failure, x.Err)
	case x.Status != http.StatusOK:
		t.listBroken = what + ", not 200"
	case err != nil:
		t.listBroken = fmt.Sprintf("%s with no JSON array of records: %s", what, strings.TrimPrefix(err.Error(), ErrNotList.Error()+": "))
	case len(ix.Order) == 0 && ix.BadCount > 0:
		records := "records, none"
		if ix.BadCount == 1 {
			records = "record, not"
		}
		t.listBroken = fmt.Sprintf("%s with %d %s with an int64 %s", what, ix.BadCount, records, inv.Key)
	default:
		t.first = ix
		t.badRecords = map[string]bool{}
		for _, p := range Errors(t.ResponseProblems(x)) {
			if p.Record != "" {
				t.badRecords[p.Record] = true
			}
		}
	}
	if t.listBroken != "" {
		t.listBroken = "the list breaks the contract: " + t.listBroken
	}
	t.petID = cfg.PetID
	switch {
	case t.first == nil:
		return nil // the list checks fail; the checks that need a record say why they were not judged
	case cfg.PetID != 0:
		if _, ok := t.first.ByID[cfg.PetID]; !ok {
			return setupErrorf("--pet-id %d is not in the target's list", cfg.PetID)
		}
	case len(t.first.Order) > 0:
		// One that keeps the contract, where there is one.
		i := slices.IndexFunc(t.first.Order, func(id int64) bool { return !t.badRecords[strconv.FormatInt(id, 10)] })
		t.petID = t.first.Order[max(i, 0)]
	case cfg.AllowMutations:
		return setupErrorf("--allow-mutations: the target lists no record (GET %s answered %d with %d bytes: an empty list); the mutating checks need at least one pet to write to and restore: add one, or run without --allow-mutations", x.URL, x.Status, len(x.RespBody))
	}
	// A second list, with no write between: a target that cannot hold a
	// record still cannot be judged on what a write did.
	y := t.Send(ctx, Request{Method: inv.List.Method, Path: inv.List.Path})
	if y.Failure != "" || y.Status == 0 {
		return nil // no answer is the checks' business (and the gone count's)
	}
	var diffs []string
	switch ix, err := DecodeList(ctx, y.RespBody, inv.Key); {
	case y.Status != http.StatusOK:
		diffs = append(diffs, fmt.Sprintf("the second list answered %d", y.Status))
	case err != nil:
		diffs = append(diffs, fmt.Sprintf("the second list is no list (%v)", err))
	default:
		diffs = listDiff(t.first, ix, inv.Key)
	}
	if len(diffs) > 0 {
		t.unstable = "the target does not hold its records still: two lists with no write between them differ (" + examples(diffs, ", ") + ")"
		t.unstableX = y
	}
	return nil
}

// listDiff lists how list b differs from list a.
func listDiff(a, b *Index, key string) []string {
	var out []string
	for _, id := range a.Order {
		w, ok := b.ByID[id]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s %d vanished", key, id))
		case !w.Equal(a.ByID[id]):
			out = append(out, fmt.Sprintf("%s %d: %s", key, id, strings.Join(a.ByID[id].Diff(w), ", ")))
		}
	}
	for _, id := range b.Order {
		if _, ok := a.ByID[id]; !ok {
			out = append(out, fmt.Sprintf("%s %d appeared", key, id))
		}
	}
	return out
}

// unreachable says why the first request got no answer, naming the flag
// that fixes a certificate the suite does not trust.
func unreachable(x *Exchange) string {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var tlsErr *tls.CertificateVerificationError
	switch {
	case errors.As(x.Cause, &ua), errors.As(x.Cause, &tlsErr) && errors.As(tlsErr.Err, &ua):
		return fmt.Sprintf("the target's TLS certificate is signed by an authority this machine does not trust (GET %s: %v): pass its CA as --ca-cert FILE (PEM; inventory-mock --tls-self-signed --tls-cert-out FILE writes one), or --insecure-skip-verify for a test target", x.URL, x.Err)
	case errors.As(x.Cause, &hn):
		return fmt.Sprintf("the target's TLS certificate is not valid for this host name (GET %s: %v): use the name the certificate names in --base-url, or --insecure-skip-verify for a test target", x.URL, x.Err)
	case errors.As(x.Cause, &ci):
		return fmt.Sprintf("the target's TLS certificate is not valid (GET %s: %v): pass the right CA with --ca-cert FILE, or --insecure-skip-verify for a test target", x.URL, x.Err)
	}
	switch {
	case strings.Contains(x.Err, "server gave HTTP response to HTTPS client"):
		return fmt.Sprintf("target unreachable: GET %s: %v: the target speaks plain HTTP; use http:// in --base-url", x.URL, x.Err)
	case errors.Is(x.Cause, syscall.ECONNREFUSED):
		return fmt.Sprintf("target unreachable: GET %s: %v: nothing listens there; start the service (inventory-mock listens on 127.0.0.1:8080 by default) or check the host and port of --base-url", x.URL, x.Err)
	}
	var dns *net.DNSError
	if errors.As(x.Cause, &dns) {
		return fmt.Sprintf("target unreachable: GET %s: %v: the host name does not resolve; check the host of --base-url", x.URL, x.Err)
	}
	return fmt.Sprintf("target unreachable: GET %s: %v: check that the service runs and that --base-url names it (scheme, host and port)", x.URL, x.Err)
}

// notTheAPI describes an answer that no JSON API gives, such as a web
// page: the first call reached something else. "": it may be the API.
func notTheAPI(x *Exchange) string {
	if x.Status == 0 || x.Failure != "" {
		return ""
	}
	ct := x.RespHeader.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	body := bytes.TrimSpace(x.RespBody)
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "an HTML page (" + ct + ")"
	case mt != "" && strings.Contains(mt, "json"):
		return ""
	case bytes.HasPrefix(body, []byte("<")):
		return "a body that starts with '<' (markup, not JSON)"
	}
	return ""
}

// newHTTPClient builds the HTTP client for cfg's TLS settings and timeout.
func newHTTPClient(cfg Config) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.InsecureTLS}
	tr.MaxResponseHeaderBytes = 64 << 10
	if cfg.CACertFile != "" {
		pool, err := exchange.TrustedRoots(cfg.CACertFile)
		if err != nil {
			return nil, setupErrorf("--ca-cert: %v", err)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	tr.MaxIdleConnsPerHost = 32
	return &http.Client{
		Transport: tr,
		Timeout:   cfg.Timeout,
		// A redirect is an answer to check, not to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// Inventory returns the contract's inventory.
func (t *Target) Inventory() *spec.Inventory { return t.inv }

// Contract returns the loaded contract.
func (t *Target) Contract() *spec.Contract { return t.contract }

// Config returns the target's configuration, defaults filled in.
func (t *Target) Config() Config { return t.cfg }

// orDefault sets *v to d where it is zero or less.
func orDefault[T int | int64 | time.Duration](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}
