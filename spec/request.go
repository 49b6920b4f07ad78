package spec

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// A Param is one parameter of an operation, its schema compiled once.
type Param struct {
	Name     string
	In       string // path, query or header
	Required bool
	Schema   *Schema // nil: any value
}

// A Body is an operation's request body as the document declares it.
type Body struct {
	Required   bool
	MediaTypes []string // as the document lists them, such as application/json
	// Schema is the schema of the first JSON media type, compiled for a
	// request (readOnly properties are not required); nil where the body
	// is not JSON or has no schema.
	Schema *Schema
}

// planRequest compiles the parameters and body of op. Parameters declared
// on the path item apply unless the operation declares one of the same
// name and location.
func planRequest(c *compiler, item *v3.PathItem, op *v3.Operation) ([]*Param, *Body, error) {
	var params []*Param
	seen := map[string]bool{}
	for _, list := range [][]*v3.Parameter{op.Parameters, item.Parameters} {
		for _, p := range list {
			if p == nil || seen[p.In+" "+p.Name] {
				continue
			}
			seen[p.In+" "+p.Name] = true
			if p.In == "cookie" {
				continue // the contract has none, and the mock reads none
			}
			s, err := c.compile(p.Schema, schema_validation.SchemaValidationPurposeGeneric)
			if err != nil {
				return nil, nil, fmt.Errorf("parameter %s: %w", p.Name, err)
			}
			required := p.In == "path" || p.Required != nil && *p.Required
			params = append(params, &Param{Name: p.Name, In: p.In, Required: required, Schema: s})
		}
	}
	rb := op.RequestBody
	if rb == nil {
		return params, nil, nil
	}
	b := &Body{Required: rb.Required != nil && *rb.Required}
	for mt, content := range rb.Content.FromOldest() {
		b.MediaTypes = append(b.MediaTypes, mt)
		if b.Schema == nil && isJSON(mt) && content != nil && content.Schema != nil {
			s, err := c.compile(content.Schema, schema_validation.SchemaValidationPurposeRequestBody)
			if err != nil {
				return nil, nil, fmt.Errorf("request body %s: %w", mt, err)
			}
			b.Schema = s
		}
	}
	return params, b, nil
}

// CheckRequest validates what a request sends against the operation:
// each parameter (pathValue gives the path's, already unescaped), then
// the body's media type, presence, syntax and schema. It returns the
// decoded body (nil if there is none or it is not JSON) and the problems,
// parameters first; on a parameter problem the body is not looked at.
func (o *Operation) CheckRequest(r *http.Request, pathValue func(string) string, body []byte) (any, []Problem) {
	var ps []Problem
	var query map[string][]string
	for _, p := range o.Params {
		var raw []string
		switch p.In {
		case "path":
			if v := pathValue(p.Name); v != "" {
				raw = []string{v}
			}
		case "query":
			if query == nil {
				query = r.URL.Query()
			}
			raw = query[p.Name]
		case "header":
			raw = r.Header.Values(p.Name)
		}
		if len(raw) == 0 {
			if p.Required {
				ps = append(ps, Problem{Kind: KindParameter, Field: p.Name, Message: fmt.Sprintf("required %s parameter is missing", p.In)})
			}
			continue
		}
		ps = append(ps, p.check(raw)...)
	}
	if len(ps) > 0 || o.Body == nil {
		return nil, ps
	}
	if ct := r.Header.Values("Content-Type"); len(ct) > 1 && len(body) > 0 {
		return nil, []Problem{{Kind: KindContentType, Message: fmt.Sprintf("Content-Type is given %d times; send it once", len(ct))}}
	}
	return o.Body.check(r.Header.Get("Content-Type"), body)
}

func (p *Param) check(raw []string) []Problem {
	if p.Schema == nil {
		return nil
	}
	if p.Schema.bits > 0 && len(raw) == 1 {
		// A plain integer (a petId): the whole check is a parse.
		if !isIntegerText(raw[0]) {
			return []Problem{{Kind: KindParameter, Field: p.Name, Message: fmt.Sprintf("%q is not an integer", raw[0])}}
		}
		if _, err := strconv.ParseInt(raw[0], 10, p.Schema.bits); err != nil {
			lo := int64(-1) << (p.Schema.bits - 1) // the range of a signed integer of so many bits
			hi := -(lo + 1)
			return []Problem{{Kind: KindParameter, Field: p.Name, Message: fmt.Sprintf("%s is not a valid int%d: must be a whole number from %d to %d", raw[0], p.Schema.bits, lo, hi)}}
		}
		return nil
	}
	v, problem := paramValue(p.Schema, raw, p.In)
	if problem != "" {
		return []Problem{{Kind: KindParameter, Field: p.Name, Message: problem}}
	}
	ps := p.Schema.Validate(v)
	for i := range ps {
		ps[i].Kind, ps[i].Field = KindParameter, Under(p.Name, ps[i].Field)
	}
	return ps
}

// Under puts a name before a field path inside its value: petId, or
// ids[2], or filter.status; under "$", a JSON path such as $[3].status.
func Under(name, path string) string {
	switch {
	case path == "":
		return name
	case strings.HasPrefix(path, "["):
		return name + path
	}
	return name + "." + path
}

// isIntegerText reports whether s is an integer as a path or query
// parameter writes it: no sign but a minus, no leading zero, no fraction
// or exponent, no -0. It is on every request with a petId; a regular
// expression cost 1% of the mock's CPU under load.
func isIntegerText(s string) bool {
	if s == "0" {
		return true
	}
	s = strings.TrimPrefix(s, "-")
	if s == "" || s[0] < '1' || s[0] > '9' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// numberText is a JSON number.
var numberText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// paramValue reads raw parameter text as the value its schema's type
// wants, or says why it cannot. Arrays read repeated query values, or
// comma-separated values elsewhere (the default styles).
func paramValue(s *Schema, raw []string, in string) (any, string) {
	typ := primaryType(s.Model.Type)
	if typ == "array" {
		if in != "query" && len(raw) == 1 {
			raw = strings.Split(raw[0], ",")
		}
		var item *Schema
		if s.Model.Items != nil && s.Model.Items.IsA() {
			item = &Schema{Model: s.Model.Items.A.Schema()}
		}
		out := make([]any, 0, len(raw))
		for _, r := range raw {
			if item == nil || item.Model == nil {
				out = append(out, r)
				continue
			}
			v, problem := paramValue(item, []string{r}, in)
			if problem != "" {
				return nil, problem
			}
			out = append(out, v)
		}
		return out, ""
	}
	if len(raw) > 1 {
		return nil, fmt.Sprintf("given %d times; want one value", len(raw))
	}
	text := raw[0]
	switch typ {
	case "integer":
		if !isIntegerText(text) {
			return nil, fmt.Sprintf("%q is not an integer", text)
		}
		return json.Number(text), ""
	case "number":
		if !numberText.MatchString(text) {
			return nil, fmt.Sprintf("%q is not a number", text)
		}
		return json.Number(text), ""
	case "boolean":
		b, err := strconv.ParseBool(text)
		if err != nil || (text != "true" && text != "false") {
			return nil, fmt.Sprintf("%q is not true or false", text)
		}
		return b, ""
	}
	return text, ""
}

// primaryType is the schema's type other than "null", or "" for none.
func primaryType(types []string) string {
	for _, t := range types {
		if t != "null" {
			return t
		}
	}
	return ""
}

func (b *Body) check(contentType string, body []byte) (any, []Problem) {
	if len(body) == 0 {
		if b.Required {
			return nil, []Problem{{Kind: KindBody, Message: "required; send " + strings.Join(b.MediaTypes, " or ") + example(b.Schema)}}
		}
		return nil, nil
	}
	mt, ok := b.accepts(contentType)
	if !ok {
		what := fmt.Sprintf("Content-Type %q is not accepted", contentType)
		if contentType == "" {
			what = "Content-Type is missing"
		}
		return nil, []Problem{{Kind: KindContentType, Message: what + "; send " + strings.Join(b.MediaTypes, " or ")}}
	}
	if !isJSON(mt) {
		return nil, nil
	}
	v, err := DecodeJSON(body)
	if err != nil {
		je := err.(*JSONError)
		return nil, []Problem{{Kind: KindBody, Field: je.Field, Message: je.Reason}}
	}
	if b.Schema == nil {
		return v, nil
	}
	ps := b.Schema.Validate(v)
	for i := range ps {
		ps[i].Kind = KindBody
	}
	return v, ps
}

// accepts reports whether a request sent with contentType matches one of
// the body's media types, and which one. Parameters such as charset are
// ignored; the document may use wildcards such as application/*.
func (b *Body) accepts(contentType string) (string, bool) {
	if contentType == "" {
		return "", false
	}
	for _, want := range b.MediaTypes {
		if contentType == want { // the usual case, without parsing
			return want, true
		}
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	for _, want := range b.MediaTypes {
		if mediaTypeMatches(want, mt) {
			return mt, true
		}
	}
	return "", false
}

// example says, for a message, " such as " a small JSON object with the
// schema's required properties, each with a value of its type within its
// bounds; "" where s is not an object with required properties.
func example(s *Schema) string {
	if s == nil || s.Model == nil || primaryType(s.Model.Type) != "object" || len(s.Model.Required) == 0 {
		return ""
	}
	m := s.Model
	var parts []string
	for _, name := range m.Required {
		ps := s.Property(name)
		if ps == nil {
			return ""
		}
		p := ps.Model
		var v string
		switch {
		case len(p.Enum) > 0:
			v = strconv.Quote(p.Enum[0].Value)
		case primaryType(p.Type) == "integer" || primaryType(p.Type) == "number":
			n := 5.0
			if p.Minimum != nil && n < *p.Minimum {
				n = *p.Minimum
			}
			if p.Maximum != nil && n > *p.Maximum {
				n = *p.Maximum
			}
			v = strconv.FormatFloat(n, 'f', -1, 64)
		case primaryType(p.Type) == "string":
			v = `"..."`
		case primaryType(p.Type) == "boolean":
			v = "true"
		default:
			return ""
		}
		parts = append(parts, strconv.Quote(name)+": "+v)
	}
	return " such as {" + strings.Join(parts, ", ") + "}"
}

// isJSON reports whether a media type is JSON: application/json or a
// +json suffix.
func isJSON(mt string) bool {
	mt, _, _ = strings.Cut(mt, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// mediaTypeMatches reports whether the document's media type (which may be
// a wildcard such as application/* or */*) covers got.
func mediaTypeMatches(want, got string) bool {
	want = strings.ToLower(strings.TrimSpace(want))
	if w, _, err := mime.ParseMediaType(want); err == nil {
		want = w
	}
	got = strings.ToLower(got)
	if want == got || want == "*/*" {
		return true
	}
	wt, ws, _ := strings.Cut(want, "/")
	gt, _, _ := strings.Cut(got, "/")
	return ws == "*" && wt == gt
}
