package exchange

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Redacted stands for a secret without a Var, and for any credential that
// is no configured secret.
const Redacted = "[REDACTED]"

// APIKeyVar is the environment variable a curl line reads the API key
// from, as the mock's journal, the proxy's reports and the suite write it.
const APIKeyVar = "INVENTORY_API_KEY"

// ShortSecret is the length under which a secret is replaced only where it
// is a whole token: a few letters occur inside words, and replacing them
// there mangles the text while hiding nothing.
const ShortSecret = 8

// minOwn is the length under which an exchange's own credential is hidden
// only where it is named (its header, its query parameter), lest "1" or
// "abc" replace numbers and words in every body.
const minOwn = 4

// A Secret is a value to hide, such as an API key.
type Secret struct {
	Value string
	// Var is the environment variable a shell command reads the secret
	// from, such as INVENTORY_API_KEY; "" for none.
	Var string
}

type secret struct {
	Secret
	forms []string // the value and its escaped forms
	short bool     // shorter than ShortSecret
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
	other   string    // what stands for other credentials: Redacted, unless a secret overlaps it
	recent  *recent   // the credentials Remember saw; shared with the Redactors For makes
}

// A recent is a ring of the last credentials remembered.
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

var shellName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (rd *Redactor) add(s Secret) {
	if s.Value == "" || rd.secretOf(s.Value) != nil {
		return
	}
	if !shellName.MatchString(s.Var) {
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

// place chooses what stands for each secret: the first text of its
// choices that no secret occurs in, begins or ends, so that a replacement
// never makes a secret again.
func (rd *Redactor) place() {
	clean := func(texts ...string) string {
		for _, p := range texts {
			if !slices.ContainsFunc(rd.secrets, func(sc *secret) bool {
				if sc.self() {
					return false // it stands for itself, and for no other secret
				}
				return slices.ContainsFunc(sc.forms, func(f string) bool {
					for k := 1; k < len(f) && k <= len(p); k++ {
						if strings.HasSuffix(p, f[:k]) || strings.HasPrefix(p, f[len(f)-k:]) {
							return true
						}
					}
					return strings.Contains(p, f)
				})
			}) {
				return p
			}
		}
		return texts[len(texts)-1]
	}
	rd.other = clean(Redacted, "[SECRET]", "<hidden>", "***")
	for _, sc := range rd.secrets {
		sc.place = rd.other
		switch {
		case sc.self():
			sc.place = sc.Value
		case sc.Var != "":
			sc.place = clean("$"+sc.Var, "${"+sc.Var+"}", rd.other)
		}
	}
}

// self reports whether a secret reads "$" and its own Var, shown as it is.
func (sc *secret) self() bool { return sc.Var != "" && sc.Value == "$"+sc.Var }

func (rd *Redactor) hidden() string {
	if rd == nil {
		return Redacted
	}
	return rd.other
}

func (rd *Redactor) secretOf(v string) *secret {
	i := slices.IndexFunc(rd.all(), func(sc *secret) bool { return sc.Value == v })
	if i < 0 {
		return nil
	}
	return rd.secrets[i]
}

// For returns a Redactor that hides, besides rd's secrets and the
// credentials remembered, x's own credentials: the token (or bare value)
// of its Authorization and Proxy-Authorization headers, a Basic password,
// the values of headers and query parameters whose names say they carry a
// credential, and a password in its URL. They are shown as Redacted unless
// they are one of rd's secrets; those under 4 bytes only where named.
func (rd *Redactor) For(x *Exchange) *Redactor { return rd.with(x, false, "") }

// Remember is For, and remembers x's credentials besides: the Redactors
// For and Remember make afterwards, from rd or from those made from it,
// hide the last 16 remembered, in case a backend echoes another client's
// token.
func (rd *Redactor) Remember(x *Exchange) *Redactor { return rd.with(x, true, "") }

// RememberKey is Remember, and shows x's bearer token as $name (as a
// configured secret of that Var) unless it is one of rd's secrets: for a
// proxy, which knows no keys, so that a curl line replays where $name
// holds the key. A token that reads "$name" is then shown as it is.
func (rd *Redactor) RememberKey(x *Exchange, name string) *Redactor { return rd.with(x, true, name) }

// with makes the Redactor of For, Remember and RememberKey.
func (rd *Redactor) with(x *Exchange, remember bool, key string) *Redactor {
	out, own := &Redactor{}, credentials(x)
	if rd != nil {
		out.recent = rd.recent
		for _, sc := range rd.secrets {
			c := *sc
			out.secrets = append(out.secrets, &c)
		}
	}
	if key != "" {
		for _, v := range x.Header.Values("Authorization") {
			if scheme, token := authorization(v); strings.EqualFold(scheme, "Bearer") && len(token) >= minOwn {
				out.add(Secret{Value: token, Var: key})
			}
		}
	}
	if r := out.recent; r != nil {
		r.mu.Lock()
		for _, c := range own {
			if remember && !slices.Contains(r.seen[:], c) {
				r.seen[r.next], r.next = c, (r.next+1)%len(r.seen)
			}
		}
		own = append(own, r.seen[:]...)
		r.mu.Unlock()
	}
	for _, c := range own {
		// A token a Redactor already hid is no credential; one it showed
		// as a variable ("$NAME") stands for that variable still.
		if c == Redacted {
			continue
		}
		if name, ok := strings.CutPrefix(c, "$"); ok && shellName.MatchString(name) &&
			slices.ContainsFunc(out.secrets, func(sc *secret) bool { return sc.Var == name }) {
			out.add(Secret{Value: c, Var: name})
			continue
		}
		out.add(Secret{Value: c})
	}
	out.place()
	return out
}

// credentials returns x's credentials of at least minOwn bytes.
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
			switch scheme, token := authorization(v); {
			case name != "Authorization" && name != "Proxy-Authorization":
				if name != "Www-Authenticate" && secretName(name) {
					add(v)
				}
			case token == "" && !lone(scheme):
				add(scheme) // a bare token
			case strings.EqualFold(scheme, "Basic"):
				dec, _ := base64.StdEncoding.DecodeString(token)
				_, pass, _ := strings.Cut(string(dec), ":")
				add(pass)
				fallthrough
			default:
				add(token)
			}
		}
	}
	if at, end := userinfo(x.URL); at >= 0 {
		_, pass, _ := strings.Cut(x.URL[at:end], ":")
		add(unescape(pass, false))
	}
	for _, p := range queryPairs(x.URL) {
		if secretName(p[0]) {
			add(p[1])
		}
	}
	return out
}

// authorization splits an Authorization value into its scheme and token.
func authorization(v string) (scheme, token string) {
	scheme, token, _ = strings.Cut(strings.TrimSpace(v), " ")
	return scheme, strings.TrimSpace(token)
}

// lone reports whether an Authorization value without a token is a scheme
// word, shown as is.
func lone(v string) bool { return strings.EqualFold(v, "Bearer") || strings.EqualFold(v, "Basic") }

// secretName reports whether a query parameter's or header's name says it
// carries a credential.
func secretName(name string) bool {
	n := strings.ToLower(name)
	return slices.ContainsFunc([]string{"key", "token", "secret", "password", "passwd", "auth", "credential", "signature"},
		func(w string) bool { return strings.Contains(n, w) })
}

// userinfo returns where the user information of a URL is, or -1.
func userinfo(raw string) (int, int) {
	_, rest, ok := strings.Cut(raw, "://")
	if j := strings.LastIndexByte(rest[:strings.IndexAny(rest+"/", "/?#")], '@'); ok && j >= 0 {
		return len(raw) - len(rest), len(raw) - len(rest) + j
	}
	return -1, -1
}

// queryPairs returns a URL's query parameters, unescaped, in order.
func queryPairs(raw string) [][2]string {
	raw, _, _ = strings.Cut(raw, "#")
	_, query, _ := strings.Cut(raw, "?")
	var out [][2]string
	for p := range strings.SplitSeq(query, "&") {
		if name, val, _ := strings.Cut(p, "="); p != "" {
			out = append(out, [2]string{unescape(name, true), unescape(val, true)})
		}
	}
	return out
}

// unescape decodes s's %-escapes, and + as a space where plus is set,
// leaving invalid escapes as they are.
func unescape(s string, plus bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				c, i = byte(v), i+2
			}
		} else if c == '+' && plus {
			c = ' '
		}
		b = append(b, c)
	}
	return string(b)
}

// edge stands for the start or the end of a text in boundary checks.
const edge = -1

func isWord(c int) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

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
// for none). With all, it returns every occurrence, and merges touching
// ones too.
func (rd *Redactor) find(s string, before, after int, all bool) []span {
	var spans []span
	for _, sc := range rd.all() {
		for _, f := range sc.forms {
			for i := 0; ; {
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
	if len(spans) < 2 {
		return spans // the usual case, none: nothing to sort or merge
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.at, b.at) })
	out := spans[:0]
	for _, sp := range spans {
		if n := len(out); n > 0 && (sp.at < out[n-1].end || all && sp.at == out[n-1].end) {
			if sp.sec != out[n-1].sec {
				out[n-1].sec = nil
			}
			out[n-1].end = max(out[n-1].end, sp.end)
		} else {
			out = append(out, sp)
		}
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

// pieces returns s after one pass of replacements, and whether it found a
// secret; depth counts the times s was unescaped, at most 3.
func (rd *Redactor) pieces(s string, before, after, depth int) ([]piece, bool) {
	if rd == nil {
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
	if depth < 3 && strings.ContainsAny(s, "%+") {
		us := []string{unescape(s, false)}
		if u := unescape(s, true); u != us[0] {
			us = append(us, u)
		}
		for _, u := range us {
			if ps, ok := rd.pieces(u, before, after, depth+1); ok && u != s {
				return ps, true
			}
		}
	}
	return nil, false
}

// redact returns s with every secret replaced. It replaces again what a
// replacement made (a secret escaped and as it is, secrets that overlap);
// a text that still holds one after a few passes is replaced whole.
func (rd *Redactor) redact(s string, before, after int) string {
	for range 4 {
		ps, ok := rd.pieces(s, before, after, 0)
		if !ok {
			return s
		}
		s = join(ps)
	}
	if rd.Contains(s) {
		return rd.other
	}
	return s
}

// split returns s redacted in pieces, for a caller that renders them.
func (rd *Redactor) split(s string) []piece {
	ps, ok := rd.pieces(s, edge, edge, 0)
	switch {
	case !ok:
		return []piece{{text: s}}
	case rd.Contains(join(ps)):
		return []piece{{text: rd.String(s)}}
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

// headerName returns a header's name, or Redacted where it holds a secret
// in any case (the name may have been canonicalized).
func (rd *Redactor) headerName(k string) string {
	if rd.Contains(k) || rd.Contains(strings.ToLower(k)) {
		return rd.hidden()
	}
	return k
}

func (rd *Redactor) headerValue(name, v string) []piece {
	k := http.CanonicalHeaderKey(name)
	scheme, token := authorization(v)
	switch {
	case strings.TrimSpace(v) == "":
		return []piece{{text: v}}
	case k == "Cookie" || k == "Set-Cookie" || k != "Www-Authenticate" && secretName(k) && k != "Authorization" && k != "Proxy-Authorization":
		return rd.credential(v)
	case k != "Authorization" && k != "Proxy-Authorization":
		return rd.split(v)
	case token == "" && lone(scheme):
		return []piece{{text: scheme}}
	case token == "":
		return rd.credential(scheme)
	}
	ps := rd.credential(scheme) // a scheme word of letters is shown, but a secret
	if strings.Trim(scheme, "-abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
		ps = rd.split(scheme)
	}
	return append(append(ps, piece{text: " "}), rd.credential(token)...)
}

func (rd *Redactor) credential(v string) []piece {
	if sc := rd.secretOf(v); sc != nil {
		return []piece{{sc.place, sc}}
	}
	return []piece{{text: rd.hidden()}}
}

// URL returns raw with credentials hidden: the user information, the
// values of query parameters whose names say they carry a credential,
// then every secret.
func (rd *Redactor) URL(raw string) string { return rd.String(rd.namedInURL(raw)) }

// namedInURL replaces the user information of raw and the values of its
// credential-named query parameters but those that are one of rd's
// secrets, which the secret's placeholder is to replace.
func (rd *Redactor) namedInURL(raw string) string {
	if at, end := userinfo(raw); at >= 0 {
		raw = raw[:at] + rd.hidden() + raw[end:]
	}
	rest, _, _ := strings.Cut(raw, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	if !hasQuery {
		return raw
	}
	parts := strings.Split(query, "&")
	for i, p := range parts {
		name, val, _ := strings.Cut(p, "=")
		if val != "" && secretName(unescape(name, true)) && rd.secretOf(unescape(val, true)) == nil {
			parts[i] = name + "=" + rd.hidden()
		}
	}
	return base + "?" + strings.Join(parts, "&") + raw[len(rest):] // and the fragment
}

// minPiece is the shortest start of a secret Cut takes off a cut text.
const minPiece = 4

// Cut returns b redacted and cut to at most n bytes, without a trailing
// start of a secret of minPiece bytes or more (of a short secret, any
// start of a token): what a cut left of a secret. A shorter start of a
// long secret is kept: many texts end so, and it hides next to nothing.
// Use it on every text that was cut, also before (n = len(b)).
func (rd *Redactor) Cut(b []byte, n int) []byte {
	b = rd.Bytes(b)
	b = b[:min(len(b), max(n, 0))]
	for stripped := true; stripped; {
		stripped = false
		for _, sc := range rd.all() {
			for _, f := range sc.forms {
				least := minPiece
				if sc.short {
					least = 1 // a token's start, which the whole-token rule would miss
				}
				for k := min(len(f), len(b)); k >= least && !stripped; k-- {
					if bytes.HasSuffix(b, []byte(f[:k])) && (!sc.short || !isWord(byteAt(b, len(b)-k-1, edge))) {
						b, stripped = b[:len(b)-k], true
					}
				}
			}
		}
	}
	return b
}

// JSON returns the JSON document b with secrets replaced in its strings
// (member names and values) and other scalars, which become strings where
// they hold one, so that it stays a valid document; b itself where it
// holds none. It reports false, with b, where b is not JSON but holds a
// secret, or holds one in its structure: the caller then treats it as
// text.
func (rd *Redactor) JSON(b []byte) ([]byte, bool) {
	if rd == nil || bytes.IndexByte(b, '\\') < 0 && !rd.Contains(string(b)) {
		return b, true
	}
	if !json.Valid(b) {
		return b, !rd.Contains(string(b))
	}
	var out, structure bytes.Buffer
	for i, end := 0, 1; i < len(b); i, end = end, end+1 {
		switch c := b[i]; {
		case c == '"':
			for ; b[end] != '"'; end++ {
				if b[end] == '\\' {
					end++
				}
			}
			end++
		case c == '-' || isWord(int(c)):
			for end < len(b) && (isWord(int(b[end])) || strings.IndexByte("+-.", b[end]) >= 0) {
				end++
			}
		default:
			out.WriteByte(c)
			structure.WriteByte(c)
			continue
		}
		structure.WriteByte(' ')
		tok, s := b[i:end], string(b[i:end])
		if tok[0] == '"' {
			_ = json.Unmarshal(tok, &s)
		}
		if !rd.Contains(s) {
			out.Write(tok)
			continue
		}
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(rd.String(s))
		out.Truncate(out.Len() - 1) // Encode's newline
	}
	if rd.Contains(structure.String()) {
		return b, false
	}
	return out.Bytes(), true
}

// MapJSON returns v, a value decoded from JSON into any, with f applied
// to every string, member name and json.Number (which becomes a string
// where f changes it).
func MapJSON(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case json.Number:
		if s := f(string(v)); s != string(v) {
			return s
		}
	case []any:
		for i := range v {
			v[i] = MapJSON(v[i], f)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[f(k)] = MapJSON(e, f)
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

// maxHeld bounds the bytes a RedactingWriter holds back.
const maxHeld = 64 << 10

// Write redacts p and writes all but the last few bytes, which could be
// the start of a secret; a newline at its end flushes everything.
func (w *RedactingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	hold, lines := 0, true // lines: no secret holds a newline
	for _, sc := range w.rd.all() {
		for _, f := range sc.forms {
			hold, lines = max(hold, len(f)), lines && !strings.Contains(f, "\n")
		}
	}
	cut := len(w.buf) - hold
	if lines && bytes.HasSuffix(w.buf, []byte("\n")) {
		cut = len(w.buf)
	} else if cut > 0 {
		// Never cut through or right after an occurrence of a secret,
		// whether it counts or not (a replacement next to it could make it
		// count); a run of them past maxHeld is cut after its end.
		for _, sp := range w.rd.find(string(w.buf), w.prev, edge, true) {
			if sp.at < cut && cut <= sp.end {
				cut = sp.at
				if cut == 0 && len(w.buf) > maxHeld {
					cut = sp.end
				}
			}
		}
	}
	return len(p), w.emit(max(cut, 0))
}

func (rd *Redactor) all() []*secret {
	if rd == nil {
		return nil
	}
	return rd.secrets
}

func (w *RedactingWriter) emit(n int) error {
	if n == 0 {
		return nil
	}
	out := w.rd.redact(string(w.buf[:n]), w.prev, byteAt(w.buf, n, edge))
	w.prev = int(w.buf[n-1])
	w.buf = append(w.buf[:0], w.buf[n:]...)
	_, err := io.WriteString(w.w, out)
	return err
}

// Flush writes what the writer holds back.
func (w *RedactingWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.emit(len(w.buf))
}
