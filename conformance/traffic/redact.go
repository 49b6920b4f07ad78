package traffic

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// Redacted stands for a secret in everything the package writes.
const Redacted = "[REDACTED]"

// minSecret is the shortest secret searched for in bodies and messages: a
// shorter one would mangle the text it is searched in, and protects little.
// Headers that carry credentials are redacted whatever their length.
const minSecret = 4

// A redactor finds the secrets of an exchange: the configured keys, the
// exchange's own credentials (the Authorization header's token, a Basic
// password, credential-like query values), and the credentials of recent
// exchanges, in case a backend echoes another client's token. It is safe
// for concurrent use.
type redactor struct {
	keys []string

	mu     sync.Mutex // guards recent and next
	recent [16]string // credentials seen lately
	next   int
}

func newRedactor(keys []string) *redactor {
	r := &redactor{}
	for _, k := range keys {
		if k != "" {
			r.keys = append(r.keys, k)
		}
	}
	return r
}

// secrets returns the secrets to hide in what is kept of x, and remembers
// x's own credentials.
func (r *redactor) secrets(x *Exchange) secrets {
	own := credentials(x.Request)
	r.mu.Lock()
	for _, c := range own {
		if !containsString(r.recent[:], c) {
			r.recent[r.next] = c
			r.next = (r.next + 1) % len(r.recent)
		}
	}
	s := make(secrets, 0, len(r.keys)+len(r.recent)+len(own))
	s = append(s, r.keys...)
	for _, c := range r.recent {
		if c != "" {
			s = append(s, c)
		}
	}
	r.mu.Unlock()
	return append(s, own...)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// credentials returns the secrets a request carries: the token of each
// Authorization and Proxy-Authorization header (the whole value where it
// has no scheme word), the password of a Basic credential, and the values
// of query parameters whose names say they hold one.
func credentials(r *http.Request) []string {
	var out []string
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range r.Header.Values(name) {
			scheme, token, found := strings.Cut(strings.TrimSpace(v), " ")
			token = strings.TrimSpace(token)
			switch {
			case !found && scheme != "" && !strings.EqualFold(scheme, "Bearer"):
				out = append(out, scheme) // a bare token
			case token != "":
				out = append(out, token)
				if strings.EqualFold(scheme, "Basic") {
					if dec, err := base64.StdEncoding.DecodeString(token); err == nil {
						if _, pass, ok := strings.Cut(string(dec), ":"); ok && pass != "" {
							out = append(out, pass)
						}
					}
				}
			}
		}
	}
	if r.URL != nil && r.URL.RawQuery != "" {
		for name, vs := range r.URL.Query() {
			if secretName(name) {
				for _, v := range vs {
					if v != "" {
						out = append(out, v)
					}
				}
			}
		}
	}
	return out
}

// secretName reports whether a query parameter's or header's name says it
// carries a credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"key", "token", "secret", "password", "passwd", "auth", "credential", "signature"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// secrets are the values to replace in one exchange's text.
type secrets []string

// apply replaces every secret in s with Redacted.
func (sc secrets) apply(s string) string {
	for _, k := range sc {
		if len(k) >= minSecret && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	return s
}

// header copies h with credentials hidden: the Authorization header keeps
// its scheme word only, Cookie, Set-Cookie and headers whose names say they
// carry a credential are replaced, and every secret elsewhere is replaced.
func (sc secrets) header(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			switch {
			case k == "Authorization" || k == "Proxy-Authorization":
				v = schemeOnly(v)
			case k == "Cookie" || k == "Set-Cookie" || (secretName(k) && k != "Www-Authenticate"):
				v = Redacted
			default:
				v = sc.apply(v)
			}
			out[k] = append(out[k], v)
		}
	}
	return out
}

// schemeOnly keeps the scheme word of a credential header, so that a
// report still shows whether Bearer was sent: "Bearer [REDACTED]".
func schemeOnly(v string) string {
	scheme, token, found := strings.Cut(strings.TrimSpace(v), " ")
	switch {
	case v == "":
		return ""
	case !found && strings.EqualFold(scheme, "Bearer"):
		return scheme
	case !found || scheme == "":
		return Redacted
	case strings.TrimSpace(token) == "":
		return scheme
	}
	return scheme + " " + Redacted
}

// url redacts a URL: credential-like query values, then every secret.
func (sc secrets) url(raw string) string {
	u, err := url.Parse(raw)
	if err == nil && u.RawQuery != "" {
		q := u.Query()
		changed := false
		for name, vs := range q {
			if secretName(name) {
				for i := range vs {
					vs[i] = Redacted
				}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
			raw = u.String()
		}
	}
	if u != nil && u.User != nil {
		u.User = url.User(Redacted)
		raw = u.String()
	}
	return sc.apply(raw)
}
