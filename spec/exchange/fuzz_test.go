package exchange

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// tokenAt reports whether key occurs in s at i as a whole token.
func tokenAt(s, key string, i int) bool {
	word := func(j int) bool {
		return j >= 0 && j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z')
	}
	return !word(i-1) && !word(i+len(key))
}

// shows reports whether s shows key: anywhere for a long key, as a whole
// token for a short one.
func shows(s, key string) bool {
	for i := 0; i+len(key) <= len(s); i++ {
		if j := strings.Index(s[i:], key); j < 0 {
			return false
		} else if i += j; len(key) >= ShortSecret || tokenAt(s, key, i) {
			return true
		}
	}
	return false
}

// FuzzRedactor inserts a key into random text at random places (as a
// whole token where it is short): String, the writer (in writes of a
// random size), Cut and JSON never show it; a text without any form of
// the key is left as it is; the writer agrees with String.
func FuzzRedactor(f *testing.F) {
	f.Add("k3y/s3cr3t+x", "GET /v1/inventory?k=1 HTTP/1.1\nok", []byte{3, 40}, uint8(1), false)
	f.Add("pass", "it passed unchecked: user:pass", []byte{0, 9}, uint8(3), true)
	f.Add("k", "0 skipped, --insecure-skip-verify", []byte{5}, uint8(2), false)
	f.Add("aaaaaaaa", "aaaaaaa", []byte{1, 2, 3}, uint8(5), true)
	f.Add(`k"e<y\`, `{"a":"b","c":[1,2]}`, []byte{7}, uint8(4), false)
	f.Add("Yab12345", "ab12345", []byte{0}, uint8(1), true)
	f.Add("REDACTED", "[REDACTED] $INVENTORY_API_KEY", []byte{2}, uint8(7), false)
	f.Fuzz(func(t *testing.T, key, text string, at []byte, chunk uint8, withVar bool) {
		if key == "" || len(key) > 64 || len(text) > 4096 {
			return
		}
		v := ""
		if withVar {
			v = apiVar
		}
		rd := NewRedactor(Secret{key, v})
		clean := !strings.ContainsAny(text, "%+")
		for _, form := range rd.secrets[0].forms {
			clean = clean && !strings.Contains(text, form)
		}
		if clean && rd.String(text) != text {
			t.Fatalf("a text without the key changed: %q → %q", text, rd.String(text))
		}
		s, last := text, 0
		for _, b := range at {
			i := max(last, int(b)*(len(s)+1)/256)
			ins := key
			if len(key) < ShortSecret {
				ins = " " + key + " "
			}
			s, last = s[:i]+ins+s[i:], i+len(ins)
		}
		out := rd.String(s)
		if shows(out, key) {
			t.Fatalf("String(%q) = %q shows the key %q", s, out, key)
		}
		var buf bytes.Buffer
		w := rd.Writer(&buf)
		size := int(chunk%16) + 1
		for i := 0; i < len(s); i += size {
			_, _ = w.Write([]byte(s[i:min(i+size, len(s))]))
		}
		_ = w.Flush()
		if shows(buf.String(), key) {
			t.Fatalf("the writer (writes of %d) made %q of %q: it shows the key %q", size, buf.String(), s, key)
		}
		if !strings.ContainsAny(s, "%+") && buf.String() != out {
			t.Fatalf("the writer (writes of %d) made %q of %q; String %q", size, buf.String(), s, out)
		}
		if cut := rd.Cut([]byte(s), int(chunk)); shows(string(cut), key) || len(key) >= ShortSecret && bytes.HasSuffix(cut, []byte(key[:minPiece])) {
			t.Fatalf("Cut(%q, %d) = %q shows the key or its start", s, chunk, cut)
		}
		if json.Valid([]byte(s)) {
			if j, ok := rd.JSON([]byte(s)); ok && (!json.Valid(j) || holds(rd, j)) {
				t.Fatalf("JSON(%s) = %s: not valid, or shows the key", s, j)
			}
		}
	})
}
