package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/proxy"
	"github.com/petstore/inventory-kit/spec"
	"github.com/petstore/inventory-kit/spec/exchange"
)

// maxUpstreamList is the largest list --fixtures-from reads, decoded: 256
// MiB, about six million pets of the embedded contract's shape. A longer
// one is refused, with this limit named.
const maxUpstreamList = 256 << 20

// defaultFixturesTimeout is --fixtures-timeout's default: the longest a
// --fixtures-from list may take to arrive whole. A million pets, 53 MB,
// take seconds on a LAN and a minute at 7 Mbit/s; a backend that sends a
// byte now and then cannot hold start-up longer than this.
const defaultFixturesTimeout = 5 * time.Minute

// An upstream is the backend --fixtures-from lists the records of.
type upstream struct {
	base    *url.URL // with its base path, such as https://staging.example.com/v1
	key     string
	client  *http.Client
	rd      *exchange.Redactor // hides the key in every message
	limit   int64              // bytes of the list read at most
	timeout time.Duration      // --upstream-timeout, for messages
	whole   time.Duration      // --fixtures-timeout: the whole load
}

// newUpstream checks the --fixtures-from address and makes its client.
func newUpstream(o *options) (*upstream, error) {
	s, p := &o.Staging, &o.Proxy
	u, err := url.Parse(s.FixturesFrom)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--fixtures-from %q: want an http or https address with the backend's base path, such as https://staging.example.com/v1", redactedURL(s.FixturesFrom))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	transport, err := proxy.NewTransport(proxy.TransportOptions{CACertFile: p.CACert, InsecureSkipVerify: p.Insecure, Timeout: p.Timeout, MaxIdleConns: 1})
	if err != nil {
		return nil, fmt.Errorf("--upstream-ca-cert: %w", err)
	}
	key := string(s.UpstreamKey)
	return &upstream{
		base: u, key: key, limit: maxUpstreamList, timeout: p.Timeout, whole: s.FixturesTimeout,
		rd: exchange.NewRedactor(exchange.Secret{Value: key, Var: upstreamKeyEnv}),
		client: &http.Client{Transport: transport, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
			// The key goes to the address given, and nowhere else.
			return fmt.Errorf("it redirects to %s; give that address instead", r.URL.Redacted())
		}},
	}, nil
}

// redactedURL is a URL as messages show it: without a password.
func redactedURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "(not a URL)"
}

// records lists the backend's records with the key, each checked against
// the shape as a --fixtures file is. Its errors say what the backend did,
// and never hold the key.
func (u *upstream) records(ctx context.Context, shape *fixtures.Shape) (records []fixtures.Record, unknown []string, source string, err error) {
	target := *u.base
	target.Path += shape.List.Path
	where := "GET " + target.Redacted()
	ctx, cancel := context.WithTimeout(ctx, u.whole)
	defer cancel()
	var body *listBody
	defer func() {
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			read := int64(0)
			if body != nil {
				read = body.n
			}
			err = fmt.Errorf("the list did not arrive whole within --fixtures-timeout %s (%d bytes read); give a longer one for a slow backend or a long list", u.whole, read)
		}
		if err != nil {
			err = errors.New(u.rd.String(fmt.Sprintf("--fixtures-from: %s: %v", where, err)))
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+u.key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("User-Agent", "inventory-mock (--fixtures-from)")
	resp, err := u.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in where already
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, nil, "", fmt.Errorf("the backend sent no answer within --upstream-timeout %s", u.timeout)
		}
		return nil, nil, "", fmt.Errorf("the backend cannot be reached: %v", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, nil, "", fmt.Errorf("the backend refused the key (%d%s); check %s or --upstream-api-key", resp.StatusCode, u.errorMessage(resp), upstreamKeyEnv)
	case resp.StatusCode != http.StatusOK:
		return nil, nil, "", fmt.Errorf("the backend answered %d%s; want 200 with the list", resp.StatusCode, u.errorMessage(resp))
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, nil, "", fmt.Errorf("the backend answered 200 with Content-Type %q; want application/json", resp.Header.Get("Content-Type"))
	}
	body, err = u.body(resp)
	if err != nil {
		return nil, nil, "", err
	}
	records, unknown, err = fixtures.Read("the backend's list", body, shape, func(raw []byte) error {
		if holdsKey(raw, u.key) {
			// Messages quote values cut short, where the redactor could
			// not find the whole key; and the mock would serve it to anyone.
			return errors.New("the list holds the key the mock sent; it is not served, nor quoted")
		}
		return nil
	})
	switch {
	case body.err != nil: // the answer could not be read: that, not what the JSON decoder made of it
		return nil, nil, "", body.err
	case err != nil:
		return nil, nil, "", errors.New(strings.TrimPrefix(err.Error(), "fixtures: "))
	}
	return records, unknown, where, nil
}

// A listBody is the answer's body, decoded, as the list is read from it:
// it counts the bytes, refuses more than the limit, and keeps the error
// that stopped it.
type listBody struct {
	r       io.Reader
	n       int64 // bytes read
	limit   int64
	tooLong error
	err     error // why reading stopped, other than the end
}

func (b *listBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	switch {
	case b.n > b.limit:
		b.err = b.tooLong
		return 0, b.err
	case err != nil && err != io.EOF:
		b.err = fmt.Errorf("the backend's answer ended early (%d bytes read): %v", b.n, err)
		return n, b.err
	}
	return n, err
}

// body returns the answer's body, decoded, as a listBody that refuses
// more than the limit before it is all read.
func (u *upstream) body(resp *http.Response) (*listBody, error) {
	limit := fmt.Sprintf("%d bytes", u.limit)
	if u.limit%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB", u.limit>>20)
	}
	tooLong := fmt.Errorf("the list is longer than the %s --fixtures-from reads", limit)
	var body io.Reader = resp.Body
	switch strings.ToLower(resp.Header.Get("Content-Encoding")) {
	case "", "identity":
		if resp.ContentLength > u.limit {
			return nil, tooLong
		}
	case "gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("the backend's gzip answer cannot be read: %v", err)
		}
		body = zr
	default:
		return nil, fmt.Errorf("the backend answered in Content-Encoding %q; want none or gzip", resp.Header.Get("Content-Encoding"))
	}
	return &listBody{r: body, limit: u.limit, tooLong: tooLong}, nil
}

// errorMessage returns ": " and the message of an Error body, if the
// answer has one, the key hidden and then cut short; "" otherwise.
func (u *upstream) errorMessage(resp *http.Response) string {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(b, &e) != nil || e.Message == "" {
		return ""
	}
	return fmt.Sprintf(": %q", u.rd.Cut([]byte(e.Message), 200))
}

// holdsKey reports whether a JSON body holds key, as it is or in JSON
// escapes.
func holdsKey(body []byte, key string) bool {
	if bytes.Contains(body, []byte(key)) {
		return true
	}
	if !bytes.Contains(body, []byte(`\`)) {
		return false
	}
	v, err := spec.DecodeJSON(body)
	return err == nil && strings.Contains(fmt.Sprint(v), key)
}
