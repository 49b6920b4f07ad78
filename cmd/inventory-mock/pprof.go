package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"slices"
	"strings"
)

// servePprof serves Go's profiles (net/http/pprof) on their own listener
// at addr, which must be a loopback address: profiles show the mock's
// memory, and are for the person measuring it, never for its clients. The
// mux is private to this listener, so the API never exposes them.
func servePprof(addr string, args []string, logger *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--pprof %q: profiles are served on a loopback address only, such as 127.0.0.1:6060", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", cmdline(args))
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveAside(&http.Server{Handler: mux}, "--pprof", addr, "pprof", "serving profiles", "/debug/pprof/", logger)
}

// serveAside serves srv on its own listener at addr, given by flag, until
// stop; it logs served, with the URL of path, and a stop before that as
// name's.
func serveAside(srv *http.Server, flag, addr, name, served, path string, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn(name+" listener stopped", "error", err)
		}
	}()
	logger.Info(served, "url", "http://"+ln.Addr().String()+path)
	return func() { srv.Close() }, nil
}

// cmdline answers /debug/pprof/cmdline as net/http/pprof does, NUL
// between the arguments, with what they hold of secrets hidden
// (hiddenArgs).
func cmdline(args []string) http.HandlerFunc {
	body := []byte(strings.Join(hiddenArgs(args), "\x00"))
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write(body)
	}
}

// secretFlags are the flags whose values are secrets, or may hold one.
var secretFlags = map[string]func(string) string{
	"api-key":   func(string) string { return "xxxxx" },
	"admin-key": func(string) string { return "xxxxx" },
	"store": func(v string) string {
		if f, err := parseStore(v); err == nil {
			return f.safe
		}
		return "xxxxx"
	},
	"upstream-api-key": func(string) string { return "xxxxx" },
	"proxy-to":         plainURL,
	"fixtures-from":    plainURL,
}

// plainURL is a URL flag's value where it holds no password or query,
// else hidden whole.
func plainURL(v string) string {
	if u, err := url.Parse(v); err == nil && u.User == nil && u.RawQuery == "" {
		return v
	}
	return "xxxxx"
}

// hiddenArgs returns a command line with the values of secretFlags hidden,
// given as --flag VALUE or --flag=VALUE, with one dash or two.
func hiddenArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		a := out[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		hide, secret := secretFlags[name]
		switch {
		case !strings.HasPrefix(a, "-") || !secret:
		case hasValue:
			out[i] = a[:len(a)-len(value)] + hide(value)
		case i+1 < len(out):
			out[i+1] = hide(out[i+1])
			i++
		}
	}
	return out
}
