package exchange

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Redacted stands for a secret that has no environment variable, and for
// any credential that is not a configured secret.
const Redacted = "[REDACTED]"

// ShortSecret is the length under which a secret is replaced only where it
// is a whole token: a few letters occur inside ordinary words, and
// replacing them there mangles the text while hiding nothing.
const ShortSecret = 8

// minOwn is the length under which an exchange's own credential is hidden
// only where it is named (its header, its query parameter), not searched
// for in texts: "1" or "abc" would replace numbers and words in every body.
const minOwn = 4

// A Secret is a value to hide, such as an API key.
type Secret struct {
	Value string
	// Var is the environment variable a shell command reads the secret
	// from, such as INVENTORY_API_KEY; "" for none.
	Var string
}

// A secret is a Secret as a Redactor searches for it.
type secret struct {
	Secret
	forms []string // the value and its escaped forms
	short bool     // shorter than ShortSecret: replaced where it is a whole token
	place string   // what stands for it
}

// A Redactor replaces secrets wherever an exchange or a text about one is
// shown: the console, reports, logs, the journal, HAR files, curl lines.
//
// A secret is shown as "$" and its Var where it has one, else as Redacted.
// A secret of ShortSecret bytes or more is replaced wherever it occurs; a
// shorter one only where it is a whole token (the bytes either side are
// not ASCII letters or digits): "pass" in "user:pass", "Bearer pass" or
// `"pass"` is hidden, the one in "passed" is not. Besides the value, its
// URL query- and path-escaped forms and its JSON-escaped forms are
// searched, and a text holding %-escapes or + is also searched unescaped:
// where that finds a secret (%73ecret), the text is shown unescaped.
//
// Its methods are safe for concurrent use, and on a nil *Redactor, which
// knows no secrets.
type Redactor struct {
	secrets []*secret // the configured ones first
	other   string    // what stands for any other credential: Redacted, unless a secret occurs in it
	recent  *recent   // the credentials Remember saw; shared by the Redactors For makes
}

// A recent is a ring of the credentials of the last exchanges remembered.
type recent struct {
	mu   sync.Mutex // guards seen and next
	seen [16]string
	next int
}

// NewRedactor returns a Redactor of secrets, the empty ones left out.
func NewRedactor(secrets ...Secret) *Redactor {
	rd := &Redactor{recent: &recent{}}
	for _, s := range secrets {
		rd.add(s)
	}
	rd.place()
	return rd
}

// add adds s unless it is empty or known.
func (rd *Redactor) add(s Secret) {
	if s.Value == "" || rd.secretOf(s.Value) != nil {
		return
	}
	if !isVar(s.Var) {
		s.Var = ""
	}
	sc := &secret{Secret: s, short: len(s.Value) < ShortSecret}
	html, _ := json.Marshal(s.Value)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s.Value)
	for _, f := range []string{s.Value, url.QueryEscape(s.Value), url.PathEscape(s.Value),
		string(html[1 : len(html)-1]), string(plain.Bytes()[1 : plain.Len()-2])} {
		if !slices.Contains(sc.forms, f) {
			sc.forms = append(sc.forms, f)
		}
	}
	rd.secrets = append(rd.secrets, sc)
}

// isVar reports whether s is a name a POSIX shell expands.
func isVar(s string) bool {
	for i, c := range []byte(s) {
		if !(c == '_' || isWord(int(c)) && (i > 0 || c > '9')) {
			return false
		}
	}
	return s != ""
}

// placeholders are what may stand for a credential, in order of
// preference: the first that no secret overlaps is taken.
var placeholders = []string{Redacted, "[SECRET]", "<hidden>", "***"}

// place chooses what stands for each secret: a text in which no secret
// occurs, nor begins or ends, so that no replacement makes a secret again.
func (rd *Redactor) place() {
	rd.other = rd.clean(placeholders...)
	for _, sc := range rd.secrets {
		sc.place = rd.other
		if sc.Var != "" {
			sc.place = rd.clean("$"+sc.Var, "${"+sc.Var+"}", rd.other)
		}
	}
}

// clean returns the first of texts that no secret overlaps; the last if
// none is.
func (rd *Redactor) clean(texts ...string) string {
next:
	for _, p := range texts {
		for _, sc := range rd.secrets {
			for _, f := range sc.forms {
				if strings.Contains(p, f) {
					continue next
				}
				for k := 1; k < len(f) && k <= len(p); k++ {
					if strings.HasSuffix(p, f[:k]) || strings.HasPrefix(p, f[len(f)-k:]) {
						continue next
					}
				}
			}
		}
		return p
	}
	return texts[len(texts)-1]
}

// otherText is what stands for a credential that is no known secret.
func (rd *Redactor) otherText() string {
	if rd == nil {
		return Redacted
	}
	return rd.other
}

// secretOf returns the secret whose value is v, or nil.
func (rd *Redactor) secretOf(v string) *secret {
	if rd != nil {
		for _, sc := range rd.secrets {
			if sc.Value == v {
				return sc
			}
		}
	}
	return nil
}

// For returns a Redactor that hides, besides rd's secrets and the
// credentials remembered, x's own credentials: the token of its
// Authorization and Proxy-Authorization headers (the whole value where it
// has no scheme word), a Basic credential's password, the values of
// headers and query parameters whose names say they carry a credential,
// and a password in its URL. They are shown as Redacted unless they are
// one of rd's secrets; those shorter than 4 bytes are hidden only where
// they are named.
func (rd *Redactor) For(x *Exchange) *Redactor { return rd.with(credentials(x), false) }

// Remember is For, and remembers x's credentials besides: the Redactors
// that For and Remember make afterwards, from rd or from Redactors made
// from it, hide the last 16 remembered, in case a backend echoes another
// client's token.
func (rd *Redactor) Remember(x *Exchange) *Redactor { return rd.with(credentials(x), true) }

func (rd *Redactor) with(own []string, remember bool) *Redactor {
	out := &Redactor{}
	if rd != nil {
		out.recent = rd.recent
		for _, sc := range rd.secrets {
			c := *sc
			out.secrets = append(out.secrets, &c)
		}
	}
	if r := out.recent; r != nil {
		r.mu.Lock()
		for _, c := range own {
			if remember && !slices.Contains(r.seen[:], c) {
				r.seen[r.next] = c
				r.next = (r.next + 1) % len(r.seen)
			}
		}
		own = append(own, r.seen[:]...)
		r.mu.Unlock()
	}
	for _, c := range own {
		out.add(Secret{Value: c})
	}
	out.place()
	return out
}

// credentials returns the credentials x's request carries, those of at
// least minOwn bytes.
func credentials(x *Exchange) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minOwn {
			out = append(out, v)
		}
	}
	for name, vs := range x.Header {
		name = http.CanonicalHeaderKey(name)
		for _, v := range vs {
			switch {
			case name == "Authorization" || name == "Proxy-Authorization":
				scheme, token, found := strings.Cut(strings.TrimSpace(v), " ")
				token = strings.TrimSpace(token)
				if !found {
					if !lone(scheme) {
						add(scheme) // a bare token
					}
					continue
				}
				add(token)
				if dec, err := base64.StdEncoding.DecodeString(token); err == nil && strings.EqualFold(scheme, "Basic") {
					if _, pass, ok := strings.Cut(string(dec), ":"); ok {
						add(pass)
					}
				}
			case name != "Www-Authenticate" && secretName(name):
				add(v)
			}
		}
	}
	if at, end := userinfo(x.URL); at >= 0 {
		if _, pass, ok := strings.Cut(x.URL[at:end], ":"); ok {
			add(unescape(pass, false))
		}
	}
	for _, p := range queryPairs(x.URL) {
		if secretName(p[0]) {
			add(p[1])
		}
	}
	return out
}

// lone reports whether an Authorization value without a credential is a
// scheme word alone, kept as it is.
func lone(v string) bool { return strings.EqualFold(v, "Bearer") || strings.EqualFold(v, "Basic") }

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

// userinfo returns where the user information of a URL is, or -1.
func userinfo(raw string) (int, int) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return -1, -1
	}
	host := raw[i+3:]
	host = host[:strings.IndexAny(host+"/", "/?#")]
	if j := strings.LastIndexByte(host, '@'); j >= 0 {
		return i + 3, i + 3 + j
	}
	return -1, -1
}

// queryPairs returns a URL's query parameters, unescaped, in order.
func queryPairs(raw string) [][2]string {
	raw, _, _ = strings.Cut(raw, "#")
	_, query, ok := strings.Cut(raw, "?")
	if !ok || query == "" {
		return nil
	}
	var out [][2]string
	for _, p := range strings.Split(query, "&") {
		name, val, _ := strings.Cut(p, "=")
		out = append(out, [2]string{unescape(name, true), unescape(val, true)})
	}
	return out
}

// unescape decodes s's %-escapes, and + as a space where plus is set,
// leaving invalid escapes as they are.
func unescape(s string, plus bool) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
		case s[i] == '+' && plus:
			b = append(b, ' ')
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// edge stands for the start or the end of a text in boundary checks.
const edge = -1

func isWord(c int) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// byteAt is s[i], or outside where i is not in s.
func byteAt[T string | []byte](s T, i, outside int) int {
	if i < 0 || i >= len(s) {
		return outside
	}
	return int(s[i])
}

// A span is bytes [at, end) of a text that hold secrets.
type span struct {
	at, end int
	sec     *secret // nil: more than one
}

// find returns the occurrences of secrets in s that count, overlapping
// ones merged, in order; before and after are the bytes around s (edge
// for none). With all, it returns every occurrence, touching ones merged
// too.
func (rd *Redactor) find(s string, before, after int, all bool) []span {
	if rd == nil {
		return nil
	}
	var spans []span
	for _, sc := range rd.secrets {
		for _, f := range sc.forms {
			for i := 0; i+len(f) <= len(s); {
				j := strings.Index(s[i:], f)
				if j < 0 {
					break
				}
				at, end := i+j, i+j+len(f)
				if all || !sc.short || !isWord(byteAt(s, at-1, before)) && !isWord(byteAt(s, end, after)) {
					spans = append(spans, span{at, end, sc})
				}
				i = at + 1
			}
		}
	}
	sort.Slice(spans, func(a, b int) bool { return spans[a].at < spans[b].at })
	out := spans[:0]
	for _, sp := range spans {
		if n := len(out); n > 0 && (sp.at < out[n-1].end || all && sp.at == out[n-1].end) {
			if sp.sec != out[n-1].sec {
				out[n-1].sec = nil
			}
			out[n-1].end = max(out[n-1].end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// A piece is part of a redacted text.
type piece struct {
	text string
	sec  *secret // the secret text stands for; nil: text is as it was, or stands for several
}

func join(ps []piece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.text)
	}
	return b.String()
}

// maxUnescape is how many times a text is unescaped in search of a secret.
const maxUnescape = 3

// pieces returns s with one pass of replacements, and whether it found a
// secret.
func (rd *Redactor) pieces(s string, before, after, depth int) ([]piece, bool) {
	if rd == nil || len(rd.secrets) == 0 {
		return nil, false
	}
	if spans := rd.find(s, before, after, false); len(spans) > 0 {
		var ps []piece
		i := 0
		for _, sp := range spans {
			if sp.at > i {
				ps = append(ps, piece{text: s[i:sp.at]})
			}
			if sp.sec != nil {
				ps = append(ps, piece{sp.sec.place, sp.sec})
			} else {
				ps = append(ps, piece{text: rd.other})
			}
			i = sp.end
		}
		if i < len(s) {
			ps = append(ps, piece{text: s[i:]})
		}
		return ps, true
	}
	if depth < maxUnescape && strings.ContainsAny(s, "%+") {
		for _, plus := range []bool{false, true} {
			if u := unescape(s, plus); u != s && (!plus || strings.Contains(s, "+")) {
				if ps, ok := rd.pieces(u, before, after, depth+1); ok {
					return ps, true
				}
			}
		}
	}
	return nil, false
}

// redact returns s with every secret replaced. It replaces again what a
// replacement made (a secret escaped and also as it is, two secrets that
// overlap); a text that still holds one after a few passes is replaced
// whole.
func (rd *Redactor) redact(s string, before, after int) string {
	for range 4 {
		ps, ok := rd.pieces(s, before, after, 0)
		if !ok {
			return s
		}
		s = join(ps)
	}
	if _, ok := rd.pieces(s, before, after, 0); ok {
		return rd.other
	}
	return s
}

// split returns s redacted in pieces, for a caller that renders the
// secrets itself.
func (rd *Redactor) split(s string) []piece {
	ps, ok := rd.pieces(s, edge, edge, 0)
	if !ok {
		return []piece{{text: s}}
	}
	if j := join(ps); rd.Contains(j) {
		return []piece{{text: rd.String(j)}}
	}
	return ps
}

// String returns s with every secret replaced.
func (rd *Redactor) String(s string) string { return rd.redact(s, edge, edge) }

// Bytes returns b with every secret replaced; b itself when it holds none.
func (rd *Redactor) Bytes(b []byte) []byte {
	if !rd.Contains(string(b)) {
		return b
	}
	return []byte(rd.String(string(b)))
}

// Contains reports whether s holds a secret, as String would replace it.
func (rd *Redactor) Contains(s string) bool {
	_, ok := rd.pieces(s, edge, edge, 0)
	return ok
}

// Header returns a copy of h with credentials hidden. Authorization and
// Proxy-Authorization keep their scheme word ("Bearer $INVENTORY_API_KEY",
// "Bearer [REDACTED]"); the values of Cookie, Set-Cookie and of headers
// whose names say they carry a credential (key, token, secret, password,
// passwd, auth, credential, signature; WWW-Authenticate aside) are
// replaced whole; secrets are replaced in every other value, and a name
// that holds one is replaced.
func (rd *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		name := rd.headerName(k)
		for _, v := range vs {
			out[name] = append(out[name], join(rd.headerValue(k, v)))
		}
	}
	return out
}

// headerName returns a header's name, or what stands for a secret where
// it holds one (in any case: the name may have been canonicalized).
func (rd *Redactor) headerName(k string) string {
	if rd.Contains(k) || rd.Contains(strings.ToLower(k)) {
		return rd.otherText()
	}
	return k
}

// headerValue returns the value v of the header name, redacted.
func (rd *Redactor) headerValue(name, v string) []piece {
	switch k := http.CanonicalHeaderKey(name); {
	case strings.TrimSpace(v) == "":
		return []piece{{text: v}}
	case k == "Authorization" || k == "Proxy-Authorization":
		scheme, token, found := strings.Cut(strings.TrimSpace(v), " ")
		token = strings.TrimSpace(token)
		switch {
		case !found && lone(scheme):
			return []piece{{text: scheme}}
		case !found:
			return rd.credential(scheme)
		}
		ps := rd.credential(scheme)
		if strings.Trim(scheme, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
			ps = rd.split(scheme)
		}
		if token == "" {
			return ps
		}
		return append(append(ps, piece{text: " "}), rd.credential(token)...)
	case k == "Cookie" || k == "Set-Cookie" || k != "Www-Authenticate" && secretName(k):
		return rd.credential(v)
	}
	return rd.split(v)
}

// credential returns what stands for the credential v: the placeholder of
// the secret it is, else Redacted.
func (rd *Redactor) credential(v string) []piece {
	if sc := rd.secretOf(v); sc != nil {
		return []piece{{sc.place, sc}}
	}
	return []piece{{text: rd.otherText()}}
}

// URL returns raw with credentials hidden: the user information, the
// values of query parameters whose names say they carry a credential,
// then every secret.
func (rd *Redactor) URL(raw string) string { return rd.String(rd.namedInURL(raw)) }

// namedInURL replaces the user information of raw and the values of its
// credential-named query parameters, except those that are a secret's
// (the secret's placeholder replaces those).
func (rd *Redactor) namedInURL(raw string) string {
	if at, end := userinfo(raw); at >= 0 {
		raw = raw[:at] + rd.otherText() + raw[end:]
	}
	rest, frag, hasFrag := strings.Cut(raw, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return raw
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if ok && val != "" && secretName(unescape(name, true)) && rd.secretOf(unescape(val, true)) == nil {
			parts[i] = name + "=" + rd.otherText()
		}
	}
	raw = base + "?" + strings.Join(parts, "&")
	if hasFrag {
		raw += "#" + frag
	}
	return raw
}

// Cut returns b redacted and cut to at most n bytes, without a trailing
// start of a secret: the bytes a cut left of a secret that went on past
// it. Use it on every text that was cut, also where the cut was made
// before (a body that ended early: n = len(b)).
func (rd *Redactor) Cut(b []byte, n int) []byte {
	b = rd.Bytes(b)
	b = b[:min(len(b), max(n, 0))]
	for stripped := rd != nil; stripped; {
		stripped = false
		for _, sc := range rd.secrets {
			for _, f := range sc.forms {
				for k := min(len(f), len(b)); k > 0; k-- {
					if bytes.HasSuffix(b, []byte(f[:k])) && (!sc.short || !isWord(byteAt(b, len(b)-k-1, edge))) {
						b, stripped = b[:len(b)-k], true
						break
					}
				}
			}
		}
	}
	return b
}

// JSON returns the JSON document b with secrets replaced in its strings
// (member names and values) and scalars, a scalar that holds one becoming
// a string, so that it stays a valid document; b itself where it holds
// none. It reports false, with b, where b is not JSON but holds a secret,
// or holds one in its structure: the caller then treats it as text.
func (rd *Redactor) JSON(b []byte) ([]byte, bool) {
	if rd == nil || bytes.IndexByte(b, '\\') < 0 && !rd.Contains(string(b)) {
		return b, true
	}
	if !json.Valid(b) {
		return b, !rd.Contains(string(b))
	}
	var out, structure bytes.Buffer
	for i := 0; i < len(b); {
		c, end := b[i], i+1
		switch {
		case c == '"':
			for end < len(b) && b[end] != '"' {
				if b[end] == '\\' {
					end++
				}
				end++
			}
			end++
		case c == '-' || isWord(int(c)):
			for end < len(b) && (isWord(int(b[end])) || strings.IndexByte("+-.", b[end]) >= 0) {
				end++
			}
		default:
			out.WriteByte(c)
			structure.WriteByte(c)
			i++
			continue
		}
		structure.WriteByte(' ')
		tok, s := b[i:end], string(b[i:end])
		if c == '"' {
			_ = json.Unmarshal(tok, &s)
		}
		if rd.Contains(s) {
			enc := json.NewEncoder(&out)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(rd.String(s))
			out.Truncate(out.Len() - 1) // Encode's newline
		} else {
			out.Write(tok)
		}
		i = end
	}
	if rd.Contains(structure.String()) {
		return b, false
	}
	return out.Bytes(), true
}

// Value returns v, a value decoded from JSON into any, with secrets
// replaced in every string, member name and number (which becomes a
// string where it holds one).
func (rd *Redactor) Value(v any) any {
	switch v := v.(type) {
	case string:
		return rd.String(v)
	case json.Number:
		return rd.Value(string(v))
	case float64:
		if s := strconv.FormatFloat(v, 'g', -1, 64); rd.Contains(s) {
			return rd.String(s)
		}
	case []any:
		for i := range v {
			v[i] = rd.Value(v[i])
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[rd.String(k)] = rd.Value(e)
		}
		return out
	}
	return v
}

// A RedactingWriter writes to an underlying writer with secrets replaced,
// also where a secret is split across writes. Flush writes what it holds
// back. It is safe for concurrent use.
type RedactingWriter struct {
	rd   *Redactor
	mu   sync.Mutex // guards w, buf and prev
	w    io.Writer
	buf  []byte // bytes not written yet, as given
	prev int    // the last byte written; edge before the first
}

// Writer returns a RedactingWriter writing to w.
func (rd *Redactor) Writer(w io.Writer) *RedactingWriter {
	return &RedactingWriter{rd: rd, w: w, prev: edge}
}

// Write redacts p and writes all but the last few bytes, which could be
// the start of a secret; a newline at its end flushes everything.
func (w *RedactingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	hold, lines := 0, true // lines: no secret holds a newline
	if w.rd != nil {
		for _, sc := range w.rd.secrets {
			for _, f := range sc.forms {
				hold, lines = max(hold, len(f)), lines && !strings.Contains(f, "\n")
			}
		}
	}
	if lines && len(w.buf) > 0 && w.buf[len(w.buf)-1] == '\n' {
		return len(p), w.emit(len(w.buf), edge)
	}
	cut := len(w.buf) - hold
	if cut <= 0 {
		return len(p), nil
	}
	// Never cut through or right after an occurrence of a secret, whether
	// it counts or not (a replacement next to it could make it count),
	// unless a run of them grew past maxHeld.
	for _, sp := range w.rd.find(string(w.buf), w.prev, edge, true) {
		if sp.at < cut && cut <= sp.end {
			cut = sp.at
			break
		}
	}
	if cut == 0 && len(w.buf) > maxHeld {
		cut = len(w.buf)
	}
	if cut == 0 {
		return len(p), nil
	}
	return len(p), w.emit(cut, byteAt(w.buf, cut, edge))
}

// maxHeld bounds the bytes a RedactingWriter holds back.
const maxHeld = 64 << 10

// emit writes the first n bytes held, redacted; after is the byte that
// follows them.
func (w *RedactingWriter) emit(n, after int) error {
	if n == 0 {
		return nil
	}
	out := w.rd.redact(string(w.buf[:n]), w.prev, after)
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
