package spec

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/pb33f/libopenapi/datamodel/high/base"
)

// maxNotationProblems bounds the integers written with a fraction or an
// exponent one body reports one by one; the rest are counted.
const maxNotationProblems = 5

// IntegerNotation lists the values of body that the schema types
// integer and that are written with a fraction or an exponent part, such
// as 7.0 or 7e0. OpenAPI 3.0's data types define an integer as a JSON
// number without either, so under a 3.0 document each breaks
// RuleIntegerNotation; JSON Schema 2020-12 (OpenAPI 3.1) calls 7.0 an
// integer, so under a 3.1 document each is a warning,
// RuleIntegerNotation31: clients generated for an integer field may fail
// to decode it. The body is read token by token, never held decoded.
func (s *Schema) IntegerNotation(body []byte) []Problem {
	if s == nil || s.Model == nil || !maybeDecimal(body) {
		return nil
	}
	rule := RuleIntegerNotation
	if s.compiler != nil && s.compiler.version >= 3.1 {
		rule = RuleIntegerNotation31
	}
	w := notationWalk{dec: jsontext.NewDecoder(bytes.NewReader(body)), rule: rule}
	if w.walk(s.Model, nil) != nil {
		return nil // not JSON: the schema check says so
	}
	if w.more > 0 {
		last := &w.out[len(w.out)-1]
		last.Message += fmt.Sprintf(" (and %d more integers so written in this body)", w.more)
	}
	return w.out
}

// maybeDecimal reports whether b may hold a number written with a
// fraction or an exponent: a digit followed by '.', 'e' or 'E'. Most
// bodies hold none, and are not walked.
func maybeDecimal(b []byte) bool {
	for i := 1; i < len(b); i++ {
		if c := b[i]; (c == '.' || c == 'e' || c == 'E') && b[i-1] >= '0' && b[i-1] <= '9' {
			return true
		}
	}
	return false
}

// A notationWalk reads a JSON body along its schema.
type notationWalk struct {
	dec  *jsontext.Decoder
	rule string
	out  []Problem
	more int
}

// walk reads one value whose schema is m (nil: any), at path.
func (w *notationWalk) walk(m *base.Schema, path []string) error {
	if m == nil {
		return w.dec.SkipValue()
	}
	switch w.dec.PeekKind() {
	case '{':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		for w.dec.PeekKind() != '}' {
			name, err := w.dec.ReadToken()
			if err != nil {
				return err
			}
			if err := w.walk(propertyModel(m, name.String()), append(path, name.String())); err != nil {
				return err
			}
		}
		_, err := w.dec.ReadToken()
		return err
	case '[':
		if _, err := w.dec.ReadToken(); err != nil {
			return err
		}
		items := itemsModel(m)
		for i := 0; w.dec.PeekKind() != ']'; i++ {
			if err := w.walk(items, append(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
		_, err := w.dec.ReadToken()
		return err
	case '0':
		tok, err := w.dec.ReadToken()
		if err != nil {
			return err
		}
		if text := tok.String(); isInteger(m) && !isIntegerText(text) && !isIntegerText(text[1:]) {
			if len(w.out) == maxNotationProblems {
				w.more++
				return nil
			}
			why := "OpenAPI 3.0 defines integer as a JSON number without a fraction or an exponent part; write " + wholeText(text)
			if w.rule == RuleIntegerNotation31 {
				why = "an integer under OpenAPI 3.1, but clients generated for an integer field may fail to decode it; write " + wholeText(text)
			}
			w.out = append(w.out, Problem{Kind: KindResponse, Rule: w.rule, Field: fieldPath(path), Message: text + " is written with a fraction or an exponent part: " + why})
		}
		return nil
	case 0:
		return io.ErrUnexpectedEOF
	}
	return w.dec.SkipValue()
}

// wholeText renders a number written as a decimal as a plain integer
// where it is one, such as 7 for 7.0.
func wholeText(text string) string {
	if f, err := strconv.ParseFloat(text, 64); err == nil && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return "an integer"
}

// isInteger reports whether m types its value integer (and not number).
func isInteger(m *base.Schema) bool {
	if slices.Contains(m.Type, "number") {
		return false
	}
	if slices.Contains(m.Type, "integer") {
		return true
	}
	return slices.ContainsFunc(m.AllOf, func(p *base.SchemaProxy) bool {
		sub := p.Schema()
		return sub != nil && isInteger(sub)
	})
}

// propertyModel returns the schema of m's property name, looking into
// allOf; nil where m gives none.
func propertyModel(m *base.Schema, name string) *base.Schema {
	if m.Properties != nil {
		if p, ok := m.Properties.Get(name); ok && p != nil {
			return p.Schema()
		}
	}
	for _, p := range m.AllOf {
		if sub := p.Schema(); sub != nil {
			if found := propertyModel(sub, name); found != nil {
				return found
			}
		}
	}
	return nil
}

func itemsModel(m *base.Schema) *base.Schema {
	if m.Items != nil && m.Items.IsA() && m.Items.A != nil {
		return m.Items.A.Schema()
	}
	for _, p := range m.AllOf {
		if sub := p.Schema(); sub != nil {
			if found := itemsModel(sub); found != nil {
				return found
			}
		}
	}
	return nil
}
