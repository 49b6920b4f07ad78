package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// A fieldReader reads chosen top-level fields of encoded records without
// decoding the rest: sorting and filtering 100,000 records reads two
// fields of each. It is not safe for concurrent use.
type fieldReader struct {
	names  [][]byte // the fields, quoted as JSON
	r      bytes.Reader
	dec    jsontext.Decoder
	values []any
}

func newFieldReader(names []string) *fieldReader {
	fr := &fieldReader{values: make([]any, len(names))}
	for _, n := range names {
		q, _ := jsontext.AppendQuote(nil, n)
		fr.names = append(fr.names, q)
	}
	return fr
}

var errNotObject = errors.New("a stored record is not a JSON object")

// read returns the values of the fields in raw, in the order of names, as
// spec.DecodeJSON gives scalars (json.Number, string, bool, nil); nil
// where a field is absent, and the raw JSON text of an object or array.
// The result is valid until the next call.
func (fr *fieldReader) read(raw []byte) ([]any, error) {
	clear(fr.values)
	fr.r.Reset(raw)
	fr.dec.Reset(&fr.r)
	if tok, err := fr.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errNotObject
	}
	for fr.dec.PeekKind() == '"' {
		name, err := fr.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		i := fr.index(name)
		if i < 0 {
			if err := fr.dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := fr.dec.ReadValue()
		if err != nil {
			return nil, err
		}
		switch v.Kind() {
		case '"':
			s, err := jsontext.AppendUnquote(nil, v)
			if err != nil {
				return nil, err
			}
			fr.values[i] = string(s)
		case '0':
			fr.values[i] = json.Number(v)
		case 't', 'f':
			fr.values[i] = v.Kind() == 't'
		case 'n':
			fr.values[i] = nil
		default:
			fr.values[i] = string(v)
		}
	}
	return fr.values, nil
}

// index returns the position of a quoted member name among the fields.
func (fr *fieldReader) index(quoted []byte) int {
	if bytes.IndexByte(quoted, '\\') >= 0 {
		unq, err := jsontext.AppendUnquote(nil, quoted)
		if err != nil {
			return -1
		}
		quoted, _ = jsontext.AppendQuote(nil, unq)
	}
	return slices.IndexFunc(fr.names, func(n []byte) bool { return bytes.Equal(n, quoted) })
}
