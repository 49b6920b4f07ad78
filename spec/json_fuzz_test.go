package spec

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeJSON checks DecodeJSON against encoding/json: on valid UTF-8
// without a member name given twice, both accept the same inputs and read
// the same values; DecodeJSON never panics, and what it decodes encodes
// back (AppendJSON) to JSON that decodes to the same value. The seed
// corpus is in testdata/fuzz/FuzzDecodeJSON.
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"quantity":12}`, `{"quantity":5.0}`, `[1,2,{"a":null}]`, `"\u00e9\ud83d\ude00"`, `1e400`, `-0`,
		`{"a":1,"a":2}`, `{"quantity":`, `{} x`, "\xff", `{"a":"\u0000"}`, `[[[[[[[[[[]]]]]]]]]]`, ``, ` `, `true`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeJSON(b)
		if err != nil {
			if _, ok := err.(*JSONError); !ok {
				t.Fatalf("error %T is not a *JSONError", err)
			}
		}
		var std any
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		stdErr := d.Decode(&std)
		if stdErr == nil && len(bytes.Trim(b[d.InputOffset():], " \t\r\n")) > 0 {
			stdErr = errTrailing // encoding/json's Decoder stops after one value
		}
		comparable := utf8.Valid(b) && !bytes.Contains(b, []byte(`\ud`)) && !bytes.Contains(b, []byte(`\uD`))
		if comparable && (err == nil) != (stdErr == nil) && !duplicateName(err) {
			t.Fatalf("DecodeJSON(%q) error %v; encoding/json %v", b, err, stdErr)
		}
		if err != nil {
			return
		}
		again, err := DecodeJSON(AppendJSON(nil, v))
		if err != nil {
			t.Fatalf("AppendJSON(%q) does not decode: %v", AppendJSON(nil, v), err)
		}
		if !bytes.Equal(AppendJSON(nil, again), AppendJSON(nil, v)) {
			t.Fatalf("round trip changed %q to %q", AppendJSON(nil, v), AppendJSON(nil, again))
		}
	})
}

// duplicateName reports whether err is DecodeJSON refusing a member name
// given twice, which encoding/json accepts.
func duplicateName(err error) bool {
	je, ok := err.(*JSONError)
	return ok && bytes.Contains([]byte(je.Reason), []byte("appears more than once"))
}
