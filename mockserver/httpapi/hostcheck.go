package httpapi

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// Hosts are the host names a server answers its admin API for, besides
// the names that always reach the machine itself: localhost and its
// subdomains (RFC 6761: a browser resolves them to loopback, never through
// DNS) and IP addresses (a browser sends a name a page's site controls
// only where the page was loaded by name). Its zero value allows those
// alone. A page that rebinds its own name to 127.0.0.1 (DNS rebinding)
// reaches the server with its name in the Host header, which no such list
// holds.
type Hosts struct {
	any   bool            // "*": any name
	names map[string]bool // lower case, without a port or a trailing dot
}

// NewHosts returns the Hosts allowing names besides the loopback names and
// IP addresses; "*" allows any name. Each name is checked by NormalizeHost.
func NewHosts(names []string) (Hosts, error) {
	h := Hosts{names: map[string]bool{}}
	for _, n := range names {
		n, err := NormalizeHost(n)
		if err != nil {
			return Hosts{}, err
		}
		if n == "*" {
			h.any = true
		}
		h.names[n] = true
	}
	return h, nil
}

// NormalizeHost returns a host name as Hosts compares it: lower case,
// without a trailing dot; "*" stays "*". A value with a scheme, a path or a
// port is refused, with what to give instead.
func NormalizeHost(name string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	switch {
	case s == "":
		return "", errors.New("an empty host name; give a name such as inventory-mock (the service name in a compose file)")
	case s == "*":
		return s, nil
	case strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ "):
		return "", fmt.Errorf("%q is not a host name; give the name alone, such as inventory-mock, without a scheme or a path", name)
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		return "", fmt.Errorf("%q: give the host name without a port (%s): every port of it is allowed", name, h)
	}
	if ip := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"); net.ParseIP(ip) != nil {
		return ip, nil
	}
	s = strings.TrimSuffix(s, ".")
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return "", fmt.Errorf("%q is not a host name: a name holds letters, digits, '-', '_' and '.' only", name)
		}
	}
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return "", fmt.Errorf("%q is not a host name", name)
	}
	return s, nil
}

// Allows reports whether a request's Host header, hostport, names a host
// the server answers its admin API for. An empty Host (HTTP/1.0, which no
// browser sends) is allowed.
func (h Hosts) Allows(hostport string) bool {
	if hostport == "" || h.any {
		return true
	}
	host := strings.TrimSuffix(strings.ToLower(strings.Trim(hostOnly(hostport), "[]")), ".")
	switch {
	case host == "localhost" || strings.HasSuffix(host, ".localhost"):
		return true
	case net.ParseIP(host) != nil:
		return true
	}
	return h.names[host]
}

// AdminGuard keeps browser pages of other sites away from the admin API
// under each of bases (/__admin, and /metrics, which tells what the mock
// has served): a request to it whose Host header hosts does not
// allow is refused 403 host_not_allowed, and a request that changes state
// (not GET, HEAD or OPTIONS) sent by a page of another origin than the
// server's own and the trusted origins is refused 403 cross_origin
// (net/http's CrossOriginProtection, which reads Sec-Fetch-Site, else
// Origin against Host). Requests outside bases pass untouched, as do
// requests from clients that are not browsers (they send neither header).
// refused, if not nil, is told the origin of each request refused as
// cross-origin. Each trusted origin must be scheme://host[:port].
func AdminGuard(bases []string, hosts Hosts, trusted []string, rd *exchange.Redactor, refused func(origin string)) (Step, error) {
	cop := http.NewCrossOriginProtection()
	for _, o := range trusted {
		if err := cop.AddTrustedOrigin(o); err != nil {
			return nil, err
		}
	}
	return func(w http.ResponseWriter, r *http.Request) *http.Request {
		i := slices.IndexFunc(bases, func(base string) bool { return Under(r.URL.Path, base) })
		if i < 0 {
			return r
		}
		base := bases[i]
		if !hosts.Allows(r.Host) {
			WriteError(w, r, http.StatusForbidden, CodeHostNotAllowed, fmt.Sprintf(
				"Host %q is not a name this server answers %s/ for: only localhost, IP addresses and the names given with --allowed-host are (a guard against DNS rebinding); to reach it by this name, start it with --allowed-host %s",
				shown(rd, r.Host), base, shown(rd, hostOnly(r.Host))))
			return nil
		}
		if err := cop.Check(r); err != nil {
			origin := r.Header.Get("Origin")
			if refused != nil {
				refused(origin)
			}
			msg := "this request came from a page of another site"
			if origin != "" {
				msg = fmt.Sprintf("this request came from a page of another origin (%s)", shown(rd, origin))
			}
			WriteError(w, r, http.StatusForbidden, CodeCrossOrigin, msg+"; the admin API takes changes from its own dashboard and from the origins given with --admin-origin only")
			return nil
		}
		return r
	}, nil
}

// Under reports whether path is base or under it.
func Under(path, base string) bool {
	return strings.HasPrefix(path, base) && (len(path) == len(base) || path[len(base)] == '/')
}

// hostOnly returns the host of a Host header, without its port.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}

// shown is a value a client sent, as a message repeats it: keys hidden,
// and at most 100 bytes.
func shown(rd *exchange.Redactor, v string) string {
	v = rd.String(v)
	if len(v) <= 100 {
		return v
	}
	return cut(v, 100) + "..."
}
