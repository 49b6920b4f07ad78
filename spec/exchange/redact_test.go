package exchange

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

const apiVar = "INVENTORY_API_KEY"

// apiKey is a redactor of key as the suite has it: read from
// $INVENTORY_API_KEY.
func apiKey(key string) *Redactor { return NewRedactor(Secret{key, apiVar}) }

// writeBytewise writes s to rd's writer a byte at a time.
func writeBytewise(rd *Redactor, s string) string {
	var out bytes.Buffer
	w := rd.Writer(&out)
	for i := range len(s) {
		_, _ = w.Write([]byte{s[i]})
	}
	_ = w.Flush()
	return out.String()
}

// TestRedactorRules pins each rule of String, and that the writer, fed a
// byte at a time, agrees with it.
func TestRedactorRules(t *testing.T) {
	tests := []struct {
		name    string
		secrets []Secret
		in      string
		want    string
	}{
		{"long key inside a word", []Secret{{"long-key-1234", apiVar}}, "xlong-key-1234x", "x$INVENTORY_API_KEYx"},
		{"long key without a variable", []Secret{{"long-key-1234", ""}}, "key long-key-1234.", "key [REDACTED]."},
		{"short key inside a word", []Secret{{"pass", ""}}, "it passed unchecked, bypass", "it passed unchecked, bypass"},
		{"short key after a colon", []Secret{{"pass", ""}}, "user:pass", "user:[REDACTED]"},
		{"short key after Bearer", []Secret{{"pass", apiVar}}, "Bearer pass", "Bearer $INVENTORY_API_KEY"},
		{"short key quoted", []Secret{{"pass", ""}}, `{"p":"pass"}`, `{"p":"[REDACTED]"}`},
		{"one-letter key", []Secret{{"k", apiVar}}, "0 skipped, --insecure-skip-verify, k", "0 skipped, --insecure-skip-verify, $INVENTORY_API_KEY"},
		{"one-letter key in XML", []Secret{{"x", apiVar}}, `<?xml version="1.0"?><x a="x">x</x>`, `<?xml version="1.0"?><$INVENTORY_API_KEY a="$INVENTORY_API_KEY">$INVENTORY_API_KEY</$INVENTORY_API_KEY>`},
		{"short key among words", []Secret{{"test", apiVar}}, "testsuites tests=1 latest test", "testsuites tests=1 latest $INVENTORY_API_KEY"},
		{"short key in a query", []Secret{{"test", apiVar}}, "?api_key=test&access_token=test", "?api_key=$INVENTORY_API_KEY&access_token=$INVENTORY_API_KEY"},
		{"query-escaped", []Secret{{"k3y/s3cr3t+x", apiVar}}, "q=k3y%2Fs3cr3t%2Bx&", "q=$INVENTORY_API_KEY&"},
		{"path-escaped", []Secret{{"k3y s3cr3t/x", apiVar}}, "/v1/k3y%20s3cr3t%2Fx/", "/v1/$INVENTORY_API_KEY/"},
		{"JSON-escaped", []Secret{{`k3y"s3<r3t`, apiVar}}, `{"a":"k3y\"s3\u003cr3t","b":"k3y\"s3<r3t"}`, `{"a":"$INVENTORY_API_KEY","b":"$INVENTORY_API_KEY"}`},
		{"percent-escaped, shown unescaped", []Secret{{"secret-key-1", ""}}, "/v1/inventory/%73ecret-key-1?a=%41", "/v1/inventory/[REDACTED]?a=A"},
		{"escaped and plain", []Secret{{"secret-key-1", ""}}, "secret-key-1 and %73ecret-key-1", "[REDACTED] and [REDACTED]"},
		{"invalid escapes left", []Secret{{"secret-key-1", ""}}, "%zz %73ecret-key-1", "%zz [REDACTED]"},
		{"two secrets", []Secret{{"api-key-0001", apiVar}, {"admin-key-0002", "INVENTORY_ADMIN_KEY"}}, "api-key-0001/admin-key-0002", "$INVENTORY_API_KEY/$INVENTORY_ADMIN_KEY"},
		{"overlapping secrets", []Secret{{"abcdefgh12", apiVar}, {"gh12xyzabc", ""}}, "<abcdefgh12xyzabc>", "<[REDACTED]>"},
		{"a key the variable's placeholder would make again", []Secret{{"Yab12345", apiVar}}, "Yab12345ab12345", "${INVENTORY_API_KEY}ab12345"},
		{"a key inside the placeholders", []Secret{{"REDACTED", ""}}, "a REDACTED b", "a [SECRET] b"},
		{"empty secrets ignored", []Secret{{"", apiVar}}, "text", "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := NewRedactor(tt.secrets...)
			if got := rd.String(tt.in); got != tt.want {
				t.Errorf("String(%q) = %q; want %q", tt.in, got, tt.want)
			}
			if got := rd.Contains(tt.in); got != (tt.in != tt.want) {
				t.Errorf("Contains(%q) = %v", tt.in, got)
			}
			if got := rd.String(tt.want); got != tt.want {
				t.Errorf("String of the redacted text changed it again: %q", got)
			}
			if strings.Contains(tt.in, "%") {
				return // the writer does not unescape
			}
			if got := writeBytewise(rd, tt.in); got != tt.want {
				t.Errorf("the writer wrote %q; want %q", got, tt.want)
			}
		})
	}
}

func TestNilRedactor(t *testing.T) {
	var rd *Redactor
	if rd.String("k") != "k" || rd.Contains("k") || string(rd.Bytes([]byte("k"))) != "k" || string(rd.Cut([]byte("abc"), 2)) != "ab" || rd.URL("/a?b=c") != "/a?b=c" {
		t.Error("a nil Redactor changed a text")
	}
	if got, ok := rd.JSON([]byte(`{"a":1}`)); !ok || string(got) != `{"a":1}` {
		t.Errorf("JSON = %s, %v", got, ok)
	}
	if got := rd.Header(http.Header{"Authorization": {"Bearer tok"}, "X-A": {"b"}}); got.Get("Authorization") != "Bearer [REDACTED]" || got.Get("X-A") != "b" {
		t.Errorf("Header = %v; want the credential hidden all the same", got)
	}
	if writeBytewise(rd, "abc") != "abc" {
		t.Error("the writer of a nil Redactor changed the text")
	}
}

// TestIssueBasicPassword: a Basic credential user:pass made a finding read
// "it [REDACTED]ed unchecked". The password is hidden where it is a token,
// never inside a word.
func TestIssueBasicPassword(t *testing.T) {
	x := &Exchange{Method: "GET", URL: "https://h/v1/inventory", Header: http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}}
	rd := NewRedactor(Secret{"configured-key-1", apiVar}).For(x)
	for in, want := range map[string]string{
		"it passed unchecked":        "it passed unchecked",
		"user:pass was sent":         "user:[REDACTED] was sent",
		"token dXNlcjpwYXNz":         "token [REDACTED]",
		"key configured-key-1, pass": "key $INVENTORY_API_KEY, [REDACTED]",
	} {
		if got := rd.String(in); got != want {
			t.Errorf("String(%q) = %q; want %q", in, got, want)
		}
	}
	if got := rd.Header(x.Header).Get("Authorization"); got != "Basic [REDACTED]" {
		t.Errorf("Authorization shown as %q", got)
	}
}

// TestForHidesTheExchangesCredentials: a Redactor For an exchange hides
// its own credentials, as Redacted unless they are configured; Remember
// keeps the last 16 for the exchanges after.
func TestForHidesTheExchangesCredentials(t *testing.T) {
	base := NewRedactor(Secret{"configured-key-1", apiVar})
	x := &Exchange{Method: "GET", URL: "https://bob:hunter2pw@h/v1/inventory?api_key=query-token-9&access_token=ab&x=1",
		Header: http.Header{"Authorization": {"Bearer bearer-token-7"}, "X-Api-Key": {"configured-key-1"}, "Proxy-Authorization": {"bare-token-5"}}}
	rd := base.For(x)
	text := "bearer-token-7 query-token-9 hunter2pw bare-token-5 configured-key-1 ab"
	if got, want := rd.String(text), "[REDACTED] [REDACTED] [REDACTED] [REDACTED] $INVENTORY_API_KEY ab"; got != want {
		t.Errorf("String = %q; want %q (a credential under 4 bytes is hidden only where it is named)", got, want)
	}
	if got, want := rd.URL(x.URL), "https://[REDACTED]@h/v1/inventory?api_key=[REDACTED]&access_token=[REDACTED]&x=1"; got != want {
		t.Errorf("URL = %q; want %q", got, want)
	}
	h := rd.Header(x.Header)
	if h.Get("Authorization") != "Bearer [REDACTED]" || h.Get("X-Api-Key") != "$INVENTORY_API_KEY" || h.Get("Proxy-Authorization") != Redacted {
		t.Errorf("Header = %v", h)
	}
	if base.String(text) != "bearer-token-7 query-token-9 hunter2pw bare-token-5 $INVENTORY_API_KEY ab" {
		t.Error("For changed the Redactor it was made from")
	}
	// Remember: another client's token, echoed later, is hidden too.
	base.Remember(x)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			y := &Exchange{URL: "/", Header: http.Header{"Authorization": {"Bearer other-client-" + string(rune('a'+i))}}}
			base.Remember(y)
		}()
	}
	wg.Wait()
	later := base.For(&Exchange{URL: "/"})
	if got := later.String("echo bearer-token-7 other-client-c"); got != "echo [REDACTED] [REDACTED]" {
		t.Errorf("a remembered token: %q", got)
	}
	for i := range 16 {
		base.Remember(&Exchange{URL: "/?token=filler-token-" + string(rune('a'+i))})
	}
	if got := base.For(&Exchange{URL: "/"}).String("bearer-token-7"); got != "bearer-token-7" {
		t.Errorf("a token 16 exchanges old is still remembered: %q", got)
	}
}

func TestHeader(t *testing.T) {
	rd := NewRedactor(Secret{"configured-key-1", apiVar}, Secret{"admin-key-000002", ""})
	h := rd.Header(http.Header{
		"Authorization":            {"Bearer configured-key-1", "Bearer other-token", "Bearer", "", "configured-key-1", "Token  admin-key-000002"},
		"Cookie":                   {"session=abc"},
		"Set-Cookie":               {"id=1"},
		"Www-Authenticate":         {`Bearer realm="x"`},
		"X-Session-Token":          {"tok"},
		"Idempotency-Key":          {"k-1"},
		"Content-Type":             {"application/json; note=configured-key-1"},
		"X-Configured-Key-1-Extra": {"1"},
	})
	want := http.Header{
		"Authorization":    {"Bearer $INVENTORY_API_KEY", "Bearer [REDACTED]", "Bearer", "", "$INVENTORY_API_KEY", "Token [REDACTED]"},
		"Cookie":           {Redacted},
		"Set-Cookie":       {Redacted},
		"Www-Authenticate": {`Bearer realm="x"`},
		"X-Session-Token":  {Redacted},
		"Idempotency-Key":  {Redacted},
		"Content-Type":     {"application/json; note=$INVENTORY_API_KEY"},
		Redacted:           {Redacted}, // the name holds a key, and says "key"
	}
	for k, v := range want {
		if strings.Join(h[k], "|") != strings.Join(v, "|") {
			t.Errorf("%s: %q; want %q", k, h[k], v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("Header = %v", h)
	}
}

// TestCutLeavesNoPartOfTheKey: a key cut by a capped read or a shown
// excerpt leaves none of its first 4 or more bytes behind; a short key's
// start is taken off where it could be a token's.
func TestCutLeavesNoPartOfTheKey(t *testing.T) {
	const key = "secretkey-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rd := NewRedactor(Secret{key, ""})
	for n := 1; n < len(key); n++ {
		b := []byte(strings.Repeat("a", 100) + key[:n])
		if got := rd.Cut(b, len(b)); n >= minPiece && len(got) != 100 || n < minPiece && len(got) != len(b) {
			t.Errorf("Cut left %q of the key's %d first bytes; want none of 4 or more, and fewer kept whole", got[100:], n)
		}
		long, shown := []byte(strings.Repeat("a", 100)+key+"b"), strings.Repeat("a", 100)+"[REDACTED]b"
		if got := rd.Cut(long, 100+n); string(got) != shown[:min(100+n, len(shown))] {
			t.Errorf("Cut(%d) = %q; want the key hidden before the cut", 100+n, got)
		}
	}
	short := NewRedactor(Secret{"pass", ""})
	if got := string(short.Cut([]byte("a bypa"), 6)); got != "a bypa" {
		t.Errorf("Cut = %q; want a word's end kept", got)
	}
	if got := string(short.Cut([]byte("user:pa"), 7)); got != "user:" {
		t.Errorf("Cut = %q; want a token's start taken off", got)
	}
}

// TestRedactJSONKeepsTheDocument: secrets are replaced in a JSON body's
// strings and scalars only, so a short key never breaks the document.
func TestRedactJSONKeepsTheDocument(t *testing.T) {
	for _, key := range []string{"e", "n", "u", "1", "true", "k3y\"/x", "12345678"} {
		rd := apiKey(key)
		q := strings.ReplaceAll(key, `"`, `\"`)
		in := []byte(`{"a":true,"b":1e5,"c":"\u0041\n","` + q + `":"` + q + `","n":null,"num":[12345678,-1.5]}`)
		got, ok := rd.JSON(in)
		if !ok || !json.Valid(got) {
			t.Errorf("key %q: JSON(%s) = %s, %v; want a valid document", key, in, got, ok)
		}
		if !bytes.Contains(got, []byte(`"$INVENTORY_API_KEY":"$INVENTORY_API_KEY"`)) || holds(rd, got) {
			t.Errorf("key %q: JSON(%s) = %s; want the key hidden", key, in, got)
		}
	}
	rd := apiKey("secret-key-1")
	if got, ok := rd.JSON([]byte(`{"a":"\u0073ecret-key-1"}`)); !ok || string(got) != `{"a":"$INVENTORY_API_KEY"}` {
		t.Errorf("an escaped key: %s, %v", got, ok)
	}
	if got, ok := rd.JSON([]byte(`not json secret-key-1`)); ok || string(got) != `not json secret-key-1` {
		t.Errorf("not JSON: %s, %v; want it back and false", got, ok)
	}
	if got, ok := apiKey(",").JSON([]byte(`["a" , "b"]`)); ok || string(got) != `["a" , "b"]` {
		t.Errorf("a key in the structure: %s, %v; want false", got, ok)
	}
	v := MapJSON(map[string]any{"secret-key-1": []any{"a secret-key-1", 1.0, json.Number("2")}}, rd.String)
	if b, _ := json.Marshal(v); string(b) != `{"$INVENTORY_API_KEY":["a $INVENTORY_API_KEY",1,2]}` {
		t.Errorf("MapJSON = %s", b)
	}
	if v := MapJSON(json.Number("12345678"), apiKey("12345678").String); v != "$INVENTORY_API_KEY" {
		t.Errorf("MapJSON of a number that is the key = %#v", v)
	}
}

// TestRedactingWriterSplitKeys writes texts holding keys in pieces of
// every size: the key is never written, and the writer agrees with String.
func TestRedactingWriterSplitKeys(t *testing.T) {
	rd := NewRedactor(Secret{"k3y/s3cr3t+x", apiVar}, Secret{"pw", ""})
	msg := "GET https://h/v1/inventory?k=k3y%2Fs3cr3t%2Bx\nAuthorization: Bearer k3y/s3cr3t+x, pw, pwd, (pw)" + "k3y/s3cr3t+x"
	want := rd.String(msg)
	for size := 1; size < len(msg); size++ {
		var out bytes.Buffer
		w := rd.Writer(&out)
		for i := 0; i < len(msg); i += size {
			_, _ = w.Write([]byte(msg[i:min(i+size, len(msg))]))
		}
		_ = w.Flush()
		if out.String() != want {
			t.Fatalf("writes of %d bytes: %q; want %q", size, out.String(), want)
		}
	}
	if strings.Contains(want, "s3cr3t") || strings.Contains(want, " pw,") || !strings.Contains(want, "pwd") {
		t.Errorf("String = %q", want)
	}
}

func TestSecretVar(t *testing.T) {
	for v, want := range map[string]string{"INVENTORY_ADMIN_KEY": "$INVENTORY_ADMIN_KEY", "_k1": "$_k1", "1K": Redacted, "A-B": Redacted, "": Redacted} {
		if got := NewRedactor(Secret{"long-enough-key", v}).String("long-enough-key"); got != want {
			t.Errorf("Var %q: %q; want %q", v, got, want)
		}
	}
}

// holds reports whether a string, member name or number of the JSON
// document b holds a secret.
func holds(rd *Redactor, b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return true
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return rd.Contains(v)
		case json.Number:
			return rd.Contains(string(v))
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			for k, e := range v {
				if rd.Contains(k) || walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// TestRedactingWriterLongRun: a run of overlapping occurrences of a key
// longer than the writer holds back is written, hidden, as it comes.
func TestRedactingWriterLongRun(t *testing.T) {
	var out bytes.Buffer
	w := NewRedactor(Secret{"aaaaaaaa", ""}).Writer(&out)
	chunk := []byte(strings.Repeat("a", 1<<10))
	for range 80 {
		_, _ = w.Write(chunk)
	}
	if out.Len() == 0 {
		t.Error("the writer holds all of an 80 KiB run back")
	}
	_ = w.Flush()
	if strings.Contains(out.String(), "aaaaaaaa") {
		t.Errorf("the key shows in %.200q", out.String())
	}
}
