package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestRedactingWriterHidesTheKey(t *testing.T) {
	const key = "k3y/s3cr3t+x"
	rd := NewRedactor(key)
	x := Exchange{
		Method: "GET", URL: "https://h/v1/inventory?k=" + key, Header: http.Header{"Authorization": {"Bearer " + key}},
		Status: 200, RespHead: http.Header{"Content-Type": {"application/json; x=\"" + key + "\""}},
		RespBody: []byte(`{"echo":"` + key + `","q":"k3y%2Fs3cr3t%2Bx"}`),
		Err:      errors.New("dial https://h/v1/inventory?k=" + key), rd: rd,
	}
	var out bytes.Buffer
	w := rd.Writer(&out)
	msg := x.Want("wanted %s", key) + x.Got()
	// Written a byte at a time: a key split across writes is still found.
	for i := range len(msg) {
		if _, err := w.Write([]byte{msg[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), key) || strings.Contains(out.String(), "k3y%2Fs3cr3t%2Bx") {
		t.Errorf("the key appears in:\n%s", out.String())
	}
	if !strings.Contains(out.String(), KeyPlaceholder) {
		t.Errorf("no placeholder in:\n%s", out.String())
	}
	if got := out.Len(); got < len(msg)/2 {
		t.Errorf("wrote %d bytes of %d", got, len(msg))
	}
}

// TestShortKeys: a key shorter than ShortKey is hidden where it stands on
// its own, never inside a word, so the texts around it stay readable.
func TestShortKeys(t *testing.T) {
	tests := []struct {
		key, in, want string
	}{
		{"k", "Bearer k", "Bearer $INVENTORY_API_KEY"},
		{"k", `{"code":"bad key k","message":"k"}`, `{"code":"bad key $INVENTORY_API_KEY","message":"$INVENTORY_API_KEY"}`},
		{"k", "0 skipped, --insecure-skip-verify", "0 skipped, --insecure-skip-verify"},
		{"x", `<?xml version="1.0"?><x a="x">x</x>`, `<?xml version="1.0"?><$INVENTORY_API_KEY a="$INVENTORY_API_KEY">$INVENTORY_API_KEY</$INVENTORY_API_KEY>`},
		{"test", "testsuites tests=1 latest test", "testsuites tests=1 latest $INVENTORY_API_KEY"},
		{"test", "?api_key=test&access_token=test", "?api_key=$INVENTORY_API_KEY&access_token=$INVENTORY_API_KEY"},
		{"long-key-1234", "xlong-key-1234x", "x$INVENTORY_API_KEYx"},
	}
	for _, tt := range tests {
		rd := NewRedactor(tt.key)
		if got := rd.String(tt.in); got != tt.want {
			t.Errorf("key %q: String(%q) = %q; want %q", tt.key, tt.in, got, tt.want)
		}
		// The writer, a byte at a time, agrees with String.
		var out bytes.Buffer
		w := rd.Writer(&out)
		for i := range len(tt.in) {
			_, _ = w.Write([]byte{tt.in[i]})
		}
		_ = w.Flush()
		if out.String() != tt.want {
			t.Errorf("key %q: the writer wrote %q; want %q", tt.key, out.String(), tt.want)
		}
	}
}

// TestRedactJSONKeepsTheDocument: the key is replaced in a JSON body's
// strings only, so a short key never breaks the document.
func TestRedactJSONKeepsTheDocument(t *testing.T) {
	for _, key := range []string{"e", "n", "u", "1", "true", "k3y\"/x"} {
		rd := NewRedactor(key)
		in := []byte(`{"a":true,"b":1e5,"c":"\u0041\n","` + strings.ReplaceAll(key, `"`, `\"`) + `":"` + strings.ReplaceAll(key, `"`, `\"`) + `","n":null}`)
		got, ok := rd.JSON(in)
		if !ok || !json.Valid(got) {
			t.Errorf("key %q: JSON(%s) = %s, %v; want a valid document", key, in, got, ok)
		}
		if !bytes.Contains(got, []byte(`"$INVENTORY_API_KEY":"$INVENTORY_API_KEY"`)) {
			t.Errorf("key %q: JSON(%s) = %s; want the key's member and value hidden", key, in, got)
		}
	}
}

// TestCutLeavesNoPartOfTheKey: a key cut by a capped read or a shown
// excerpt leaves none of its bytes behind.
func TestCutLeavesNoPartOfTheKey(t *testing.T) {
	const key = "secretkey-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rd := NewRedactor(key)
	for n := 1; n < len(key); n++ {
		b := []byte(strings.Repeat("a", 100) + key[:n])
		if got := rd.Cut(b, len(b)); len(got) != 100 {
			t.Errorf("Cut left %q of the key", got[100:])
		}
	}
}

// TestStderrIsRedacted: what the framework writes to Config.Stderr (a
// failed restore, at once) passes through the redactor, whether the
// caller gave a writer or left the default, os.Stderr.
func TestStderrIsRedacted(t *testing.T) {
	const key = "stderr-key-0123456789"
	var buf bytes.Buffer
	tg, err := NewTarget(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: key, Stderr: &buf})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(tg.Config().Stderr, "!!! RESTORE FAILED: petId 1: could not restore note %q\n", key)
	if strings.Contains(buf.String(), key) || !strings.Contains(buf.String(), KeyPlaceholder) {
		t.Errorf("Stderr got %q; want the key hidden", buf.String())
	}
	tg, err = NewTarget(Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tg.Config().Stderr.(*RedactingWriter); !ok {
		t.Errorf("the default Stderr is %T; want a *RedactingWriter over os.Stderr", tg.Config().Stderr)
	}
}
