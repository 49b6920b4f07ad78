package conformance

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// A Request is what a check sends, relative to the target's base URL.
type Request struct {
	Method      string
	Path        string // such as "/inventory/3" or "/inventory?api_key=..."; appended to the base URL
	Auth        string // the Authorization header; "": "Bearer <key>"; NoAuth: none
	ContentType string // empty: application/json when there is a body
	Body        []byte // nil: no body
	MaxBytes    int64  // caps the response body below Config.MaxResponseBytes (one record); 0: the configured cap

	restore bool // a restore: sent even after the run stopped, unless the target is gone
	ahead   bool // sent ahead of its check (Ahead): traced when the check takes it
}

// Values of Request.Auth that send no credential.
const (
	NoAuth    = "\x00none"  // no Authorization header
	emptyAuth = "\x00empty" // an Authorization header with an empty value
)

// An Exchange is one request the suite sent and what came back.
type Exchange struct {
	exchange.Exchange
	Op     *spec.Operation // the operation the path and method address; nil if none
	Waited time.Duration   // waited on 429 answers before this one
	Cause  error           // the transport's error where the answer failed (Failure is set)

	secrets *Secrets // hide every secret wherever the exchange is shown
}

func waitFor(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// errStopped is the cause of a request the run's stop ended.
var errStopped = errors.New("the run stopped")

// maxAttempts bounds the tries of a request answered 429.
const maxAttempts = 4

// maxOneWait bounds one wait on a 429.
const maxOneWait = 5 * time.Second

// retryAfter reads a Retry-After header (seconds or an HTTP date, RFC 9110
// section 10.2.3) as a wait between 100ms and maxOneWait; 500ms when it is
// absent or unreadable.
func retryAfter(v string, now time.Time) time.Duration {
	d := 500 * time.Millisecond
	v = strings.TrimSpace(v)
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(max(s, 0), int64(maxOneWait/time.Second)+1)) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = at.Sub(now)
	}
	return min(max(d, 100*time.Millisecond), maxOneWait)
}

// byteSize renders n bytes as MiB or KiB where exact.
func byteSize(n int64) string {
	for i, unit := range []string{"GiB", "MiB", "KiB"} {
		if shift := 30 - 10*i; n >= 1<<shift && n%(1<<shift) == 0 {
			return fmt.Sprintf("%d %s", n>>shift, unit)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Curl renders the request as a curl command line, the key as
// $INVENTORY_API_KEY and each extra header's value as its variable.
func (x *Exchange) Curl() string { return exchange.Curl(&x.Exchange, x.secrets.Redactor()) }

// Got describes the response, every secret hidden.
func (x *Exchange) Got() string { return x.Exchange.Got(x.secrets.Redactor()) }

// Want renders a failure message: what the contract wanted, the request as
// curl and what came back.
func (x *Exchange) Want(format string, args ...any) string {
	return fmt.Sprintf("contract: %s\nrequest:  %s\ngot:      %s\n", fmt.Sprintf(format, args...), x.Curl(), x.Got())
}
