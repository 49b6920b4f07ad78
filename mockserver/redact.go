package mockserver

import (
	"net/url"
	"strings"
)

// A redactor replaces the configured keys (API keys and the admin key)
// wherever the mock shows something a client sent: the access log, the
// journal, the admin API. It is the one place that knows them.
type redactor []string

// Redacted stands for a key in what the mock shows.
const Redacted = "[REDACTED]"

// newRedactor returns a redactor of keys, the empty ones left out.
func newRedactor(keys ...string) redactor {
	var rd redactor
	for _, k := range keys {
		if k != "" {
			rd = append(rd, k)
		}
	}
	return rd
}

// apply replaces every key in s. A key hidden by percent-encoding (%73ecret)
// is found too: s is then shown unescaped, with the key replaced.
func (rd redactor) apply(s string) string {
	for _, k := range rd {
		if strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	if len(rd) > 0 && strings.ContainsAny(s, "%+") {
		if u, err := url.QueryUnescape(s); err == nil && u != s {
			if r := rd.apply(u); r != u {
				return r
			}
		}
	}
	return s
}

// holds reports whether s holds a key, also percent-encoded.
func (rd redactor) holds(s string) bool {
	return rd.apply(s) != s
}

// minKeyPiece is the shortest start of a key applyCut hides at the end of
// a cut text.
const minKeyPiece = 4

// applyCut is apply for a text cut to a limit: a key the cut went through
// leaves only its start at the end of the text, which apply would not
// find; that start is replaced too.
func (rd redactor) applyCut(s string, cut bool) string {
	s = rd.apply(s)
	if !cut {
		return s
	}
	for _, k := range rd {
		for n := len(k) - 1; n >= minKeyPiece; n-- {
			if strings.HasSuffix(s, k[:n]) {
				return s[:len(s)-n] + Redacted
			}
		}
	}
	return s
}
