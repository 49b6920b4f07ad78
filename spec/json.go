package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// A JSONError says why a body is not one well-formed JSON value: where, and
// what was wrong, in words for an Error message.
type JSONError struct {
	Offset int64  // the byte offset where decoding stopped
	Field  string // the member whose name or value was wrong, such as "quantity"; empty for the whole body
	Reason string // such as "field \"quantity\" appears more than once"
}

// Error returns the reason with its place.
func (e *JSONError) Error() string { return e.Reason }

// decoders holds JSON decoders between calls; a Decoder keeps its buffers.
var decoders = sync.Pool{New: func() any { return new(decoder) }}

type decoder struct {
	r    bytes.Reader
	dec  jsontext.Decoder
	name []byte // Members' member name, unquoted
}

// borrowDecoder takes a decoder of b from the pool; release puts it back.
func borrowDecoder(b []byte) *decoder {
	d := decoders.Get().(*decoder)
	d.r.Reset(b)
	d.dec.Reset(&d.r)
	return d
}

func (d *decoder) release() {
	d.r.Reset(nil) // keep no reference to b
	decoders.Put(d)
}

// DecodeJSON decodes b, which must hold exactly one JSON value, into the
// values JSON Schema validation works on: map[string]any, []any,
// json.Number (exact, never rounded through float64), string, bool and
// nil. It is stricter than encoding/json where a body would otherwise be
// read in a way its sender may not mean: a member name given twice and
// invalid UTF-8 are errors, as is anything after the value. Every error is
// a *JSONError.
func DecodeJSON(b []byte) (any, error) {
	d := borrowDecoder(b)
	defer d.release()
	v, err := d.value()
	if err == nil {
		if _, err = d.dec.ReadToken(); err == io.EOF {
			return v, nil
		}
		if err == nil {
			err = errTrailing
		}
	}
	return nil, jsonError(err, d.dec.InputOffset(), len(b))
}

var errTrailing = errors.New("trailing data")

// Limits on a JSON number DecodeJSON reads. Exact numbers are checked with
// big rationals, whose cost grows faster than their length: a body of a
// million digits would cost seconds of CPU. No value of this contract
// needs more.
const (
	MaxNumberLength   = 100  // characters of a number as written
	MaxNumberExponent = 1000 // the largest exponent, either way
)

// checkNumber refuses a number longer than MaxNumberLength or with an
// exponent past MaxNumberExponent.
func checkNumber(n string) error {
	if len(n) > MaxNumberLength {
		return &JSONError{Reason: fmt.Sprintf("a number of %d characters; the mock reads numbers of at most %d", len(n), MaxNumberLength)}
	}
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(n[i+1:], "+"))
		if err != nil || e > MaxNumberExponent || e < -MaxNumberExponent {
			return &JSONError{Reason: fmt.Sprintf("the number %s has an exponent past ±%d", cut(n, 40), MaxNumberExponent)}
		}
	}
	return nil
}

// cut shortens s to at most n bytes for a message, saying how long it was.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("...(%d characters)", len(s))
}

// Members calls yield with the name and raw value of each member of the
// JSON object b, in order, without decoding the values; raw is a slice of
// b, and name, unquoted, is valid only until yield returns. It stops early
// if yield returns false.
func Members(b []byte, yield func(name, raw []byte) bool) error {
	d := borrowDecoder(b)
	defer d.release()
	if tok, err := d.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errors.New("not a JSON object")
	}
	for d.dec.PeekKind() != '}' {
		quoted, err := d.dec.ReadValue() // a name, valid only until the next read
		if err != nil {
			return err
		}
		if name := quoted[1 : len(quoted)-1]; bytes.IndexByte(name, '\\') < 0 {
			d.name = append(d.name[:0], name...)
		} else if d.name, err = jsontext.AppendUnquote(d.name[:0], quoted); err != nil {
			return err
		}
		name := d.name
		raw, err := d.dec.ReadValue()
		if err != nil {
			return err
		}
		end := int(d.dec.InputOffset())
		if !yield(name, b[end-len(raw):end:end]) {
			return nil
		}
	}
	return nil
}

func (d *decoder) value() (any, error) {
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for d.dec.PeekKind() != '}' {
			name, err := d.dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := name.String()
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		_, err = d.dec.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for d.dec.PeekKind() != ']' {
			v, err := d.value()
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err = d.dec.ReadToken()
		return a, err
	case '"':
		return tok.String(), nil
	case '0':
		n := tok.String()
		if err := checkNumber(n); err != nil {
			return nil, err
		}
		return json.Number(n), nil
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// jsonError turns a decoder error into a *JSONError with a message a
// client can act on.
func jsonError(err error, off int64, size int) *JSONError {
	e := &JSONError{Offset: off}
	var se *jsontext.SyntacticError
	var ne *JSONError // a number past the limits
	switch {
	case errors.As(err, &ne):
		e.Reason = ne.Reason
	case size == 0 || (errors.Is(err, io.EOF) && off == 0):
		e.Reason = "malformed JSON: the body is empty"
	case errors.Is(err, errTrailing):
		e.Reason = fmt.Sprintf("malformed JSON: more data after the value (at byte %d)", off)
	case errors.As(err, &se):
		e.Offset = se.ByteOffset
		// A JSON Pointer such as /items/0/quantity, as items[0].quantity.
		e.Field = fieldPath(strings.Split(strings.TrimPrefix(string(se.JSONPointer), "/"), "/"))
		switch {
		case errors.Is(se.Err, jsontext.ErrDuplicateName):
			name := e.Field
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			e.Reason = fmt.Sprintf("field %q appears more than once", name)
		case errors.Is(se.Err, io.ErrUnexpectedEOF):
			e.Reason = fmt.Sprintf("malformed JSON: unexpected end of input after %d bytes", size)
		default:
			e.Reason = fmt.Sprintf("malformed JSON: %s (at byte %d)", syntaxReason(se.Err), se.ByteOffset)
		}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		e.Reason = fmt.Sprintf("malformed JSON: unexpected end of input after %d bytes", size)
	default:
		e.Reason = "malformed JSON: " + err.Error()
	}
	return e
}

// syntaxReason words the decoder's own error without its package prefix.
func syntaxReason(err error) string {
	if err == nil {
		return "invalid syntax"
	}
	return strings.TrimPrefix(err.Error(), "jsontext: ")
}

// pointerEscapes undoes JSON Pointer's escapes of "/" and "~".
var pointerEscapes = strings.NewReplacer("~1", "/", "~0", "~")

// fieldPath renders the segments of an instance location as a field path:
// ["items", "0", "quantity"] gives items[0].quantity.
func fieldPath(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		if strings.Contains(s, "~") {
			s = pointerEscapes.Replace(s)
		}
		if s != "" && strings.Trim(s, "0123456789") == "" { // an index
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// AppendJSON appends v, a value as DecodeJSON returns it, as compact JSON:
// object members in sorted order, numbers as written, strings escaped
// without encoding/json's HTML escaping (these bodies are read by programs
// and people, not pasted into HTML).
func AppendJSON(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case json.Number:
		return append(b, v...)
	case string:
		return AppendString(b, v)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'g', -1, 64)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSON(b, e)
		}
		return append(b, ']')
	case map[string]any:
		keys := slices.AppendSeq(make([]string, 0, len(v)), maps.Keys(v))
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			b = AppendJSON(b, v[k])
		}
		return append(b, '}')
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

// AppendString appends s as a JSON string. Plain ASCII is copied as it
// is; anything that needs escaping goes through encoding/json, without its
// HTML escaping.
func AppendString(b []byte, s string) []byte {
	plain := true
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// ReadJSONArray reads one JSON array from r, as a stream, and calls each
// with the raw encoding of every element in turn, valid only until each
// returns: a list of any length is read in the memory of its largest
// element. It is as strict as DecodeJSON (a member name given twice,
// invalid UTF-8, anything after the array). notArray is returned where
// the value is not an array; an error of each is returned as it is; other
// errors are *JSONError.
func ReadJSONArray(r io.Reader, notArray error, each func(raw []byte) error) error {
	dec := jsontext.NewDecoder(r)
	fail := func(err error) error { return jsonError(err, dec.InputOffset(), int(dec.InputOffset())) }
	tok, err := dec.ReadToken()
	switch {
	case err != nil:
		return fail(err)
	case tok.Kind() != '[':
		return notArray
	}
	for dec.PeekKind() != ']' {
		raw, err := dec.ReadValue()
		if err != nil {
			return fail(err)
		}
		if err := each(raw); err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return fail(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errTrailing
		}
		return fail(err)
	}
	return nil
}
