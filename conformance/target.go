package conformance

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/petstore/inventory-kit/spec"
)

// Defaults of Config's limits.
const (
	DefaultTimeout          = 10 * time.Second
	DefaultMaxResponseBytes = 16 << 20 // 16 MiB decompressed per response
	DefaultMaxRunBytes      = 2 << 30  // 2 GiB decompressed over a run
	DefaultMaxRetryWait     = 30 * time.Second
	// ItemMaxBytes caps answers that are one record or an Error: 1 MiB.
	ItemMaxBytes = 1 << 20
)

// Config says which implementation to check and how far the suite may go.
type Config struct {
	BaseURL        string         // the environment address, ending in the contract's base path (/v1)
	APIKey         string         // sent as "Authorization: Bearer <key>"; never shown
	Contract       *spec.Contract // nil: the embedded contract
	AllowMutations bool           // run the checks that write
	PetID          int64          // the one record the run writes to (checks and exploration); 0: the checks the first listed, the exploration any
	Strict         bool           // a warning (what only HTTP's RFCs require) fails its check
	Timeout        time.Duration  // per request; 0: DefaultTimeout
	CACertFile     string         // extra PEM roots for the target's certificate
	InsecureTLS    bool           // skip verification of the target's certificate
	Client         *http.Client   // nil: one built from Timeout, CACertFile and InsecureTLS

	MaxResponseBytes int64         // cap on one decompressed response body; 0: DefaultMaxResponseBytes
	MaxRunBytes      int64         // cap on all decompressed response bodies of a run; 0: DefaultMaxRunBytes
	MaxRetryWait     time.Duration // total wait on 429 answers over a run; 0: DefaultMaxRetryWait

	Explore ExploreConfig

	// Trace, if set, receives every exchange as it happens (--verbose).
	Trace io.Writer
	// Stderr receives messages that must be seen at once (a failed
	// restore); nil: os.Stderr. Either way it is written through the
	// target's Redactor.
	Stderr io.Writer
}

// A Target is a prepared implementation under test. It is safe for
// concurrent use.
type Target struct {
	cfg      Config
	base     *url.URL
	client   *http.Client
	contract *spec.Contract
	inv      *spec.Inventory
	judge    *spec.Judge
	redactor *exchange.Redactor
	first    []Record // the records as first listed
	petID    int64    // the record mutating checks touch; 0 when none is known

	read    atomic.Int64  // decompressed response bytes read so far
	answers *spec.Answers // answers by operation and status, for coverage

	waitMu sync.Mutex    // guards waited
	waited time.Duration // time spent waiting on 429 answers

	traceMu sync.Mutex // serialises writes to cfg.Trace

	guard guard
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
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxRunBytes <= 0 {
		cfg.MaxRunBytes = DefaultMaxRunBytes
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	rd := KeyRedactor(cfg.APIKey)
	if _, ok := cfg.Stderr.(*exchange.RedactingWriter); !ok {
		cfg.Stderr = rd.Writer(cfg.Stderr)
	}
	cfg.Explore = cfg.Explore.withDefaults()
	t := &Target{cfg: cfg, base: base, client: cfg.Client, contract: contract, inv: inv, judge: spec.NewJudge(contract, nil), redactor: rd, answers: spec.NewAnswers(contract)}
	t.guard.pending = map[int64]Record{}
	if t.client == nil {
		if t.client, err = newClient(cfg); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Prepare checks cfg, reads the contract's inventory, builds the HTTP client
// and makes one plain list call with the key. Any error it returns is a
// *SetupError. A list call that answers but breaks the contract is not a
// setup error: the checks report it.
func Prepare(ctx context.Context, cfg Config) (*Target, error) {
	t, err := NewTarget(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" {
		return nil, setupErrorf("no API key: pass --api-key or set INVENTORY_API_KEY")
	}
	cfg, inv, contract := t.cfg, t.inv, t.contract
	x := t.Send(ctx, Request{Method: inv.List.Method, Path: inv.List.Path})
	switch {
	case x.Failure == exchange.FailureNoAnswer:
		return nil, setupErrorf("%s", unreachable(x))
	case x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden:
		return nil, setupErrorf("the API key was rejected: a plain GET %s answered %d", x.URL, x.Status)
	case x.Status == http.StatusNotFound:
		return nil, setupErrorf("GET %s answered 404: check --base-url, which should end in %s", x.URL, contract.BasePath)
	}
	if x.Status == http.StatusOK && x.Failure == "" {
		t.first, _ = decodeRecords(x.RespBody) // a broken list is the list checks' business
	}
	ix := indexRecords(t.first, inv.Key)
	t.petID = cfg.PetID
	switch {
	case cfg.PetID != 0:
		if _, ok := ix.ByID[cfg.PetID]; !ok {
			return nil, setupErrorf("--pet-id %d is not in the target's list", cfg.PetID)
		}
	case len(ix.Order) > 0:
		t.petID = ix.Order[0]
	case cfg.AllowMutations:
		return nil, setupErrorf("--allow-mutations: the target lists no record (GET %s answered %d with %d bytes); the mutating checks need at least one pet to write to and restore: add one, or run without --allow-mutations", x.URL, x.Status, len(x.RespBody))
	}
	return t, nil
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
	return fmt.Sprintf("target unreachable: GET %s: %v", x.URL, x.Err)
}

// newClient builds the HTTP client for cfg's TLS settings and timeout.
func newClient(cfg Config) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.InsecureTLS}
	tr.MaxResponseHeaderBytes = 64 << 10
	if cfg.CACertFile != "" {
		pem, err := os.ReadFile(cfg.CACertFile)
		if err != nil {
			return nil, setupErrorf("--ca-cert: %v", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, setupErrorf("--ca-cert %s: no PEM certificate in the file", cfg.CACertFile)
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

// PetID returns the record mutating checks touch, or 0 when none is known.
func (t *Target) PetID() int64 { return t.petID }

// Inventory returns what the contract says the target keeps and how it
// is reached.
func (t *Target) Inventory() *spec.Inventory { return t.inv }

// Contract returns the loaded contract.
func (t *Target) Contract() *spec.Contract { return t.contract }

// Config returns the target's configuration, defaults filled in.
func (t *Target) Config() Config { return t.cfg }

// Redactor returns the redactor of the target's key.
func (t *Target) Redactor() *exchange.Redactor { return t.redactor }

// KeyRedactor returns the redactor of an API key, shown as
// $INVENTORY_API_KEY so that a curl line replays where it is set.
func KeyRedactor(key string) *exchange.Redactor {
	return exchange.NewRedactor(exchange.Secret{Value: key, Var: "INVENTORY_API_KEY"})
}

// Mutations reports whether checks may write.
func (t *Target) Mutations() bool { return t.cfg.AllowMutations }

// BytesRead returns the decompressed response bytes read so far.
func (t *Target) BytesRead() int64 { return t.read.Load() }
