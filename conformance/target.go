package conformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/petstore/inventory-kit/spec"
)

// SuiteName is the description the suite runs under, in reports.
const SuiteName = "Pet Store Inventory conformance"

// KeyPlaceholder stands for the API key wherever a request is shown.
const KeyPlaceholder = "$INVENTORY_API_KEY"

// DefaultTimeout bounds each request when Config.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Config says which implementation to check and how far the suite may go.
type Config struct {
	BaseURL        string        // the environment address, ending in /v1
	APIKey         string        // sent as "Authorization: Bearer <key>"; never shown
	AllowMutations bool          // run the specs labelled "mutating"
	PetID          int64         // the pet mutating specs may touch; 0: the first listed
	Timeout        time.Duration // per request; 0: DefaultTimeout
	CACertFile     string        // extra PEM roots for the target's certificate
	InsecureTLS    bool          // skip verification of the target's certificate
	Client         *http.Client  // nil: one built from Timeout, CACertFile and InsecureTLS
}

// A Target is a prepared implementation under test. It is safe for
// concurrent use.
type Target struct {
	cfg      Config
	base     *url.URL
	client   *http.Client
	contract *spec.Contract
	pets     []Item // as first listed
	petID    int64  // the pet mutating specs touch; 0 when none is known
}

// An Item is a decoded InventoryItem.
type Item struct {
	PetID    int64  `json:"petId"`
	Quantity int64  `json:"quantity"`
	Status   string `json:"status"`
}

// A SetupError says why a run could not be made: bad configuration, an
// unreachable target, or a key the target rejects.
type SetupError struct{ Msg string }

// Error returns the message.
func (e *SetupError) Error() string { return e.Msg }

// setupErrorf formats a SetupError.
func setupErrorf(format string, args ...any) *SetupError {
	return &SetupError{Msg: fmt.Sprintf(format, args...)}
}

// Prepare checks cfg, builds the HTTP client and makes one plain list call
// with the key. Any error it returns is a *SetupError. A list call that
// answers but breaks the contract is not a setup error: the specs report it.
func Prepare(ctx context.Context, cfg Config) (*Target, error) {
	contract, err := spec.Shared()
	if err != nil {
		return nil, setupErrorf("loading the contract: %v", err)
	}
	base, err := url.Parse(strings.TrimSuffix(cfg.BaseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, setupErrorf("--base-url %q: want an http or https address such as https://staging.example.com/v1", cfg.BaseURL)
	}
	if cfg.APIKey == "" {
		return nil, setupErrorf("no API key: pass --api-key or set INVENTORY_API_KEY")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	t := &Target{cfg: cfg, base: base, client: cfg.Client, contract: contract}
	if t.client == nil {
		if t.client, err = newClient(cfg); err != nil {
			return nil, err
		}
	}
	x := t.send(ctx, Request{Method: http.MethodGet, Path: "/inventory"})
	switch {
	case x.Err != nil:
		return nil, setupErrorf("target unreachable: GET %s: %v", x.redact(x.URL), x.redactErr())
	case x.Status == http.StatusUnauthorized || x.Status == http.StatusForbidden:
		return nil, setupErrorf("the API key was rejected: a plain GET %s answered %d", x.redact(x.URL), x.Status)
	case x.Status == http.StatusNotFound:
		return nil, setupErrorf("GET %s answered 404: check --base-url, which should end in /v1", x.redact(x.URL))
	}
	if x.Status == http.StatusOK {
		_ = json.Unmarshal(x.RespBody, &t.pets) // a broken list is the list specs' business
	}
	t.petID = cfg.PetID
	if cfg.PetID != 0 {
		if _, ok := findItem(t.pets, cfg.PetID); !ok {
			return nil, setupErrorf("--pet-id %d is not in the target's list", cfg.PetID)
		}
	} else if len(t.pets) > 0 {
		t.petID = t.pets[0].PetID
	}
	return t, nil
}

// newClient builds the HTTP client for cfg's TLS settings and timeout.
func newClient(cfg Config) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: cfg.InsecureTLS}
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

// PetID returns the pet mutating specs touch, or 0 when none is known.
func (t *Target) PetID() int64 { return t.petID }

// findItem returns the record of petId id in items.
func findItem(items []Item, id int64) (Item, bool) {
	for _, it := range items {
		if it.PetID == id {
			return it, true
		}
	}
	return Item{}, false
}

var current *Target

// Use makes t the target of the specs and routes Gomega's failures to
// Ginkgo. Call it before RunSpecs.
func Use(t *Target) {
	current = t
	gomega.RegisterFailHandler(ginkgo.Fail)
}

// target returns the target the specs run against.
func target() *Target {
	if current == nil {
		panic(errors.New("conformance: no target: call Use before RunSpecs"))
	}
	return current
}
