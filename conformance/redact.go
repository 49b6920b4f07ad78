package conformance

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// KeyPlaceholder stands for the API key wherever a request or a text the
// target sent is shown.
const KeyPlaceholder = "$INVENTORY_API_KEY"

// ShortKey is the length under which a key is only replaced where it
// stands on its own (not inside a longer word): a key of a few letters
// occurs inside ordinary words, and replacing it there would mangle the
// text while hiding nothing.
const ShortKey = 8

// A Redactor replaces the API key, and the forms a target may echo it in
// (URL- and JSON-escaped), with KeyPlaceholder. It works on values: the
// texts that go into the console, the summary and the reports, and the
// exchanges as they are recorded, before any of them is cut or encoded as
// XML or JSON. It never rewrites encoded bytes, so no key can break the
// structure of a report.
//
// A key of ShortKey bytes or more is replaced wherever it occurs. A
// shorter one is replaced where it is not part of a longer word (the
// bytes either side are not ASCII letters or digits): the key "k" in
// "Bearer k" or `"k"` is hidden, the k in "skipped" is left alone.
type Redactor struct {
	key   string
	forms []string // the key and its escaped forms, longest first
	short bool     // the key is shorter than ShortKey
}

// NewRedactor returns a Redactor for key; an empty key redacts nothing.
func NewRedactor(key string) *Redactor {
	rd := &Redactor{key: key, short: len(key) < ShortKey}
	if key == "" {
		return rd
	}
	seen := map[string]bool{}
	quoted, _ := json.Marshal(key)
	for _, f := range []string{key, url.QueryEscape(key), url.PathEscape(key), strings.Trim(string(quoted), `"`)} {
		if f != "" && !seen[f] {
			seen[f] = true
			rd.forms = append(rd.forms, f)
		}
	}
	for i := 1; i < len(rd.forms); i++ { // longest first
		for j := i; j > 0 && len(rd.forms[j]) > len(rd.forms[j-1]); j-- {
			rd.forms[j], rd.forms[j-1] = rd.forms[j-1], rd.forms[j]
		}
	}
	return rd
}

// edge stands for the start or the end of a text in boundary checks.
const edge = -1

func isWord(c int) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// next finds the first occurrence of a form in s at or after i that counts
// (for a short key: not inside a longer word). before is the byte before
// s and after the byte after it (edge for none). It returns the start and
// the form's length, or -1.
func (rd *Redactor) next(s string, i, before, after int) (int, int) {
	for i < len(s) {
		best, n := -1, 0
		for _, f := range rd.forms {
			if j := strings.Index(s[i:], f); j >= 0 && (best < 0 || i+j < best) {
				best, n = i+j, len(f)
			}
		}
		if best < 0 {
			return -1, 0
		}
		if !rd.short {
			return best, n
		}
		b, a := before, after
		if best > 0 {
			b = int(s[best-1])
		}
		if best+n < len(s) {
			a = int(s[best+n])
		}
		if !isWord(b) && !isWord(a) {
			return best, n
		}
		i = best + 1
	}
	return -1, 0
}

// replace returns s with every occurrence that counts replaced.
func (rd *Redactor) replace(s string, before, after int) string {
	if rd == nil || len(rd.forms) == 0 {
		return s
	}
	at, n := rd.next(s, 0, before, after)
	if at < 0 {
		return s
	}
	var b strings.Builder
	i := 0
	for at >= 0 {
		b.WriteString(s[i:at])
		b.WriteString(KeyPlaceholder)
		i = at + n
		at, n = rd.next(s, i, before, after)
	}
	b.WriteString(s[i:])
	return b.String()
}

// String returns s with the key replaced.
func (rd *Redactor) String(s string) string { return rd.replace(s, edge, edge) }

// Bytes returns b with the key replaced; b itself when it holds no key.
func (rd *Redactor) Bytes(b []byte) []byte {
	if !rd.Contains(string(b)) {
		return b
	}
	return []byte(rd.String(string(b)))
}

// Contains reports whether s holds the key in any of its forms, as String
// would replace it.
func (rd *Redactor) Contains(s string) bool {
	if rd == nil || len(rd.forms) == 0 {
		return false
	}
	at, _ := rd.next(s, 0, edge, edge)
	return at >= 0
}

// Header returns h with the key replaced in every value; h itself when no
// value holds it.
func (rd *Redactor) Header(h http.Header) http.Header {
	found := false
	for _, vs := range h {
		for _, v := range vs {
			found = found || rd.Contains(v)
		}
	}
	if !found {
		return h
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		out[k] = make([]string, len(vs))
		for i, v := range vs {
			out[k][i] = rd.String(v)
		}
	}
	return out
}

// Cut returns b (which holds no key, or has been redacted) cut to at most
// n bytes, and without a trailing start of the key: the bytes a cut, or a
// capped read, left of a key that went on past it.
func (rd *Redactor) Cut(b []byte, n int) []byte {
	if len(b) > n {
		b = b[:n]
	}
	if rd == nil {
		return b
	}
	for _, f := range rd.forms {
		for k := min(len(f)-1, len(b)); k > 0; k-- {
			if bytes.HasSuffix(b, []byte(f[:k])) {
				return b[:len(b)-k]
			}
		}
	}
	return b
}

// JSON returns the JSON document b with the key replaced in its strings
// (member names and values) and nothing else, so that it stays the same
// document but for the key; b itself when it holds none, or when it is
// not JSON (then the caller treats it as text).
func (rd *Redactor) JSON(b []byte) ([]byte, bool) {
	if !rd.Contains(string(b)) {
		return b, true
	}
	if !json.Valid(b) {
		return b, false
	}
	var out bytes.Buffer
	i := 0
	for i < len(b) {
		if b[i] != '"' {
			out.WriteByte(b[i])
			i++
			continue
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				end++
			}
			end++
		}
		tok := b[i : end+1]
		var s string
		if json.Unmarshal(tok, &s) == nil && rd.Contains(s) {
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(rd.String(s))
			out.Truncate(out.Len() - 1) // Encode's newline
		} else {
			out.Write(tok)
		}
		i = end + 1
	}
	return out.Bytes(), true
}

// Value returns v, a value decoded from JSON into any, with the key
// replaced in every string and member name.
func (rd *Redactor) Value(v any) any { return mapStrings(v, rd.String) }

// mapStrings applies f to every string and member name in v, a value
// decoded from JSON into any.
func mapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case []any:
		for i := range v {
			v[i] = mapStrings(v[i], f)
		}
		return v
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[f(k)] = mapStrings(e, f)
		}
		return out
	}
	return v
}

// holdBack is how many bytes a writer keeps back: a key split across
// writes is still found, and so is the byte after it.
func (rd *Redactor) holdBack() int {
	n := 0
	for _, f := range rd.forms {
		n = max(n, len(f))
	}
	return n
}

// A RedactingWriter writes to an underlying writer with the key replaced,
// also where the key is split across writes. Flush writes what it holds
// back. It is safe for concurrent use.
type RedactingWriter struct {
	rd   *Redactor
	mu   sync.Mutex // guards w, buf and prev
	w    io.Writer
	buf  []byte // bytes not written yet, as given
	prev int    // the last byte written, edge before the first
}

// Writer returns a RedactingWriter writing to w.
func (rd *Redactor) Writer(w io.Writer) *RedactingWriter {
	return &RedactingWriter{rd: rd, w: w, prev: edge}
}

// Write redacts p and writes all but the last few bytes, which could be
// the start of the key; a newline flushes everything.
func (w *RedactingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 0 && w.buf[len(w.buf)-1] == '\n' {
		return len(p), w.emit(len(w.buf), edge)
	}
	cut := len(w.buf) - w.rd.holdBack()
	if cut <= 0 {
		return len(p), nil
	}
	// Never cut through an occurrence of the key, whether it counts or not.
	s := string(w.buf)
	for moved := true; moved && cut > 0; {
		moved = false
		for _, f := range w.rd.forms {
			for j := max(0, cut-len(f)+1); j < cut && j+len(f) <= len(s); j++ {
				if s[j:j+len(f)] == f {
					cut, moved = j, true
					break
				}
			}
		}
	}
	if cut == 0 {
		return len(p), nil
	}
	return len(p), w.emit(cut, int(w.buf[cut]))
}

// emit writes the first n bytes of the buffer redacted; after is the byte
// that follows them.
func (w *RedactingWriter) emit(n, after int) error {
	if n == 0 {
		return nil
	}
	out := w.rd.replace(string(w.buf[:n]), w.prev, after)
	w.prev = int(w.buf[n-1])
	w.buf = append(w.buf[:0], w.buf[n:]...)
	_, err := io.WriteString(w.w, out)
	return err
}

// Flush writes what the writer holds back.
func (w *RedactingWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.emit(len(w.buf), edge)
}
