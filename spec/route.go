package spec

import (
	"fmt"
	"net/url"
	"strings"
)

// A route is an operation's path template split into segments, such as
// ["inventory", "{petId}"].
type route []string

// values matches a path relative to the base path against the template
// and returns its parameters, unescaped, or nil if it does not match.
func (rt route) values(rel string) map[string]string {
	if !strings.HasPrefix(rel, "/") {
		return nil
	}
	// Not trimmed: /inventory/ and /inventory//3 have an empty segment,
	// and match no template, as a server's router would have it.
	segs := strings.Split(rel[1:], "/")
	if len(segs) != len(rt) {
		return nil
	}
	vals := map[string]string{}
	for i, t := range rt {
		if name, ok := param(t); ok {
			v, err := url.PathUnescape(segs[i])
			if err != nil || v == "" {
				return nil
			}
			vals[name] = v
			continue
		}
		if t != segs[i] {
			return nil
		}
	}
	return vals
}

// literals counts the template's fixed segments: /inventory/latest wins
// over /inventory/{petId} for the same path.
func (rt route) literals() int {
	n := 0
	for _, t := range rt {
		if _, ok := param(t); !ok {
			n++
		}
	}
	return n
}

// params lists the names of the template's parameters, in order.
func (rt route) params() []string {
	var names []string
	for _, t := range rt {
		if name, ok := param(t); ok {
			names = append(names, name)
		}
	}
	return names
}

// param reports whether a template segment is a whole parameter, {name}.
func param(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// relative returns the path relative to the base path, or "" where the
// path is not under it.
func (c *Contract) relative(path string) string {
	if c.BasePath == "" {
		return path
	}
	rest, ok := strings.CutPrefix(path, c.BasePath)
	if !ok || !strings.HasPrefix(rest, "/") {
		return ""
	}
	return rest
}

// Match finds the operation a request's method and URL path address, the
// path being absolute (under BasePath), and returns it with its path
// parameters. Where none matches it returns a KindPath problem (no such
// path) or a KindMethod problem (the path exists, not with this method).
func (c *Contract) Match(method, path string) (*Operation, map[string]string, []Problem) {
	rel := c.relative(path)
	var best *Operation
	var bestVals map[string]string
	var methods []string
	for _, op := range c.Operations {
		vals := op.route.values(rel)
		if vals == nil {
			continue
		}
		if op.Method != method {
			methods = append(methods, op.Method)
			continue
		}
		if best == nil || op.route.literals() > best.route.literals() {
			best, bestVals = op, vals
		}
	}
	switch {
	case best != nil:
		return best, bestVals, nil
	case len(methods) > 0:
		return nil, nil, []Problem{{Kind: KindMethod, Message: fmt.Sprintf("%s is not an operation of %s; the document has %s", method, path, strings.Join(methods, ", "))}}
	}
	return nil, nil, []Problem{{Kind: KindPath, Message: fmt.Sprintf("no path of the document matches %s", path)}}
}
