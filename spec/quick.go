package spec

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// A quick check is the part of a schema simple enough to decide without
// the JSON Schema validator: an object whose properties are integers,
// strings or booleans, with required names, integer bounds, int32 and
// int64 formats, and enums. The validator turns every number into a
// big.Rat through fmt.Sprint, which is most of the cost of checking a
// small body; this does not.
//
// A quick check accepts, or refuses a body whose one wrong property has a
// value of the wrong JSON type (a string for an integer), the commonest
// bad body, worded as the validator words it. Any other value it cannot
// decide (a number written 1.0 or 1e2, a property it has no rule for, two
// wrong properties) goes to the validator, which decides and words the
// problems: what it accepts, the validator accepts too, and what it
// refuses, the validator refuses with the same problems (FuzzQuickDecides
// checks it).
type quick struct {
	required []string
	props    map[string]*quickProp
	closed   bool // additionalProperties: false
}

// A quickProp is the rule of one property.
type quickProp struct {
	typ      string // integer, string or boolean
	min, max int64  // bounds of an integer, the format's included
	enum     []any  // int64 or string values; nil: any
}

// newQuick reads a schema's rules, as rulesOf renders them, into a quick
// check; nil where any keyword is outside what a quick check decides.
func newQuick(rules map[string]any) *quick {
	if rules["type"] != "object" {
		return nil
	}
	q := &quick{props: map[string]*quickProp{}}
	for k, v := range rules {
		switch k {
		case "type":
		case "required":
			names, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, n := range names {
				s, ok := n.(string)
				if !ok {
					return nil
				}
				q.required = append(q.required, s)
			}
		case "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			q.closed = !b
		case "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, p := range props {
				pm, ok := p.(map[string]any)
				if !ok {
					return nil
				}
				if q.props[name] = newQuickProp(pm); q.props[name] == nil {
					return nil
				}
			}
		default:
			return nil
		}
	}
	return q
}

// newQuickProp reads one property's rules; nil where a keyword is outside
// what a quick check decides.
func newQuickProp(rules map[string]any) *quickProp {
	p := &quickProp{min: math.MinInt64, max: math.MaxInt64}
	p.typ, _ = rules["type"].(string)
	switch p.typ {
	case "integer", "string", "boolean":
	default:
		return nil
	}
	for k, v := range rules {
		switch {
		case k == "type":
		case k == "format" && p.typ == "integer" && v == "int64":
		case k == "format" && p.typ == "integer" && v == "int32":
			p.min, p.max = max(p.min, math.MinInt32), min(p.max, math.MaxInt32)
		case (k == "minimum" || k == "maximum") && p.typ == "integer":
			n, ok := wholeInt(v)
			switch {
			case !ok:
				return nil
			case k == "minimum":
				p.min = max(p.min, n)
			default:
				p.max = min(p.max, n)
			}
		case k == "enum":
			vals, ok := v.([]any)
			if !ok {
				return nil
			}
			p.enum = []any{}
			for _, e := range vals {
				switch e := e.(type) {
				case string:
					if p.typ != "string" {
						return nil
					}
					p.enum = append(p.enum, e)
				case json.Number:
					n, ok := wholeInt(e)
					if !ok || p.typ != "integer" {
						return nil
					}
					p.enum = append(p.enum, n)
				default:
					return nil
				}
			}
		default:
			return nil
		}
	}
	return p
}

func wholeInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// decide returns v's problems, none if it keeps the rules, where the
// quick check is certain of them; decided is false where the validator
// must decide.
func (q *quick) decide(v any) (ps []Problem, decided bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	for _, name := range q.required {
		if _, ok := m[name]; !ok {
			return nil, false
		}
	}
	for name, val := range m {
		p := q.props[name]
		if p == nil {
			if q.closed {
				return nil, false
			}
			continue
		}
		if p.accepts(val) {
			continue
		}
		got := p.wrongType(val)
		if got == "" || ps != nil {
			return nil, false
		}
		ps = []Problem{{Kind: KindSchema, Field: fieldPath([]string{name}), Message: "got " + got + ", want " + p.typ}}
	}
	return ps, true
}

// wrongType returns the JSON type of v if that is certainly not the
// property's and the property has no other rule; "" otherwise. A number
// is never named: whether the validator calls it a number or an integer
// depends on how it is written.
func (p *quickProp) wrongType(v any) string {
	if p.enum != nil {
		return ""
	}
	var got string
	switch v.(type) {
	case string:
		got = "string"
	case bool:
		got = "boolean"
	case nil:
		got = "null"
	case map[string]any:
		got = "object"
	case []any:
		got = "array"
	default:
		return ""
	}
	if got == p.typ {
		return ""
	}
	return got
}

func (p *quickProp) accepts(v any) bool {
	switch p.typ {
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || i < p.min || i > p.max {
			return false
		}
		return p.enum == nil || slices.Contains(p.enum, any(i))
	case "string":
		s, ok := v.(string)
		return ok && (p.enum == nil || slices.Contains(p.enum, any(s)))
	case "boolean":
		_, ok := v.(bool)
		return ok && p.enum == nil
	}
	return false
}
