package conformance

import (
	"encoding/json"
	"io"
	"net/url"
	"strings"
	"sync"
)

// KeyPlaceholder stands for the API key wherever a request or a text the
// target sent is shown.
const KeyPlaceholder = "$INVENTORY_API_KEY"

// A Redactor replaces the API key, and the forms a target may echo it in
// (URL- and JSON-escaped), with KeyPlaceholder. It is the one place the
// suite hides the key: every byte the suite writes (console, summary,
// reports) passes through a Redactor's Writer or Bytes.
type Redactor struct {
	forms []string // the key and its escaped forms, longest first
	r     *strings.Replacer
}

// NewRedactor returns a Redactor for key; an empty key redacts nothing.
func NewRedactor(key string) *Redactor {
	rd := &Redactor{}
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
	var pairs []string
	for _, f := range rd.forms {
		pairs = append(pairs, f, KeyPlaceholder)
	}
	rd.r = strings.NewReplacer(pairs...)
	return rd
}

// String returns s with the key replaced.
func (rd *Redactor) String(s string) string {
	if rd == nil || rd.r == nil {
		return s
	}
	return rd.r.Replace(s)
}

// Bytes returns b with the key replaced.
func (rd *Redactor) Bytes(b []byte) []byte {
	if rd == nil || rd.r == nil {
		return b
	}
	return []byte(rd.r.Replace(string(b)))
}

// Contains reports whether s holds the key in any of its forms.
func (rd *Redactor) Contains(s string) bool {
	if rd == nil {
		return false
	}
	for _, f := range rd.forms {
		if strings.Contains(s, f) {
			return true
		}
	}
	return false
}

// holdBack is how many bytes a writer keeps back: a key split across two
// writes is still found.
func (rd *Redactor) holdBack() int {
	n := 0
	for _, f := range rd.forms {
		n = max(n, len(f)-1)
	}
	return n
}

// A RedactingWriter writes to an underlying writer with the key replaced,
// also where the key is split across writes. Flush writes what it holds
// back. It is safe for concurrent use.
type RedactingWriter struct {
	rd  *Redactor
	mu  sync.Mutex // guards w and buf
	w   io.Writer
	buf []byte
}

// Writer returns a RedactingWriter writing to w.
func (rd *Redactor) Writer(w io.Writer) *RedactingWriter {
	return &RedactingWriter{rd: rd, w: w}
}

// Write redacts p and writes all but the last few bytes, which could be
// the start of the key; a newline flushes everything.
func (w *RedactingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	red := w.rd.Bytes(w.buf)
	keep := 0
	if len(red) > 0 && red[len(red)-1] != '\n' {
		keep = min(w.rd.holdBack(), len(red))
	}
	if _, err := w.w.Write(red[:len(red)-keep]); err != nil {
		return 0, err
	}
	w.buf = append(w.buf[:0], red[len(red)-keep:]...)
	return len(p), nil
}

// Flush writes what the writer holds back.
func (w *RedactingWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.rd.Bytes(w.buf))
	w.buf = w.buf[:0]
	return err
}
