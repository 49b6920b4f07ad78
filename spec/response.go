package spec

import (
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/pb33f/go-yaml"
	"github.com/pb33f/libopenapi-validator/schema_validation"
	v3 "github.com/pb33f/libopenapi/datamodel/high/v3"
)

// A Response is one documented response of an operation.
type Response struct {
	Code        string   // as the document writes it: "200", "4XX" or "default"
	Description string   // as the document gives it
	MediaTypes  []string // empty: the document gives no body
	// Examples are the named examples of the first JSON media type,
	// encoded as JSON, in document order; an unnamed example is named
	// "example". An example that does not match Schema is kept, with its
	// Problems: a document whose schema grew a field before its examples
	// did still loads, and the mock refuses to send that example.
	Examples []Example
	// Schema is the schema of the first JSON media type, compiled for a
	// response (writeOnly properties are not required); nil if none.
	Schema  *Schema
	Headers []*Param // documented response headers
}

// planResponses compiles the documented responses of op.
func planResponses(c *compiler, op *v3.Operation) ([]*Response, error) {
	if op.Responses == nil {
		return nil, nil
	}
	var out []*Response
	add := func(code string, r *v3.Response) error {
		if r == nil {
			return nil
		}
		resp := &Response{Code: code, Description: strings.TrimSpace(r.Description)}
		for mt, content := range r.Content.FromOldest() {
			resp.MediaTypes = append(resp.MediaTypes, mt)
			if resp.Schema != nil || !isJSON(mt) || content == nil {
				continue
			}
			if content.Schema != nil {
				s, err := c.compile(content.Schema, schema_validation.SchemaValidationPurposeResponseBody)
				if err != nil {
					return fmt.Errorf("response %s %s: %w", code, mt, err)
				}
				resp.Schema = s
			}
			examples, err := examplesOf(content, resp.Schema)
			if err != nil {
				return fmt.Errorf("response %s %s: %w", code, mt, err)
			}
			resp.Examples = examples
		}
		for name, h := range r.Headers.FromOldest() {
			if h == nil || strings.EqualFold(name, "Content-Type") {
				continue
			}
			s, err := c.compile(h.Schema, schema_validation.SchemaValidationPurposeGeneric)
			if err != nil {
				return fmt.Errorf("response %s header %s: %w", code, name, err)
			}
			resp.Headers = append(resp.Headers, &Param{Name: name, In: "header", Required: h.Required, Schema: s})
		}
		out = append(out, resp)
		return nil
	}
	for code, r := range op.Responses.Codes.FromOldest() {
		if err := add(strings.ToUpper(code), r); err != nil {
			return nil, err
		}
	}
	if err := add("default", op.Responses.Default); err != nil {
		return nil, err
	}
	return out, nil
}

// An Example is a named example of a response body.
type Example struct {
	Name string
	JSON []byte
	// Problems says how the example breaks its response's schema; none
	// where it matches.
	Problems []Problem
}

// examplesOf encodes a media type's examples as JSON, each with its
// problems under schema (nil: none).
func examplesOf(content *v3.MediaType, schema *Schema) ([]Example, error) {
	var out []Example
	add := func(name string, n *yaml.Node) error {
		if n == nil {
			return nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("example %s: %w", name, err)
		}
		ex := Example{Name: name, JSON: AppendJSON(nil, v)}
		if schema != nil {
			ex.Problems = schema.ValidateJSON(ex.JSON)
		}
		out = append(out, ex)
		return nil
	}
	if err := add("example", content.Example); err != nil {
		return nil, err
	}
	for name, ex := range content.Examples.FromOldest() {
		if ex != nil {
			if err := add(name, ex.Value); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Example returns the named example, or nil.
func (r *Response) Example(name string) *Example {
	if i := slices.IndexFunc(r.Examples, func(e Example) bool { return e.Name == name }); i >= 0 {
		return &r.Examples[i]
	}
	return nil
}

// Response returns the documented response for status: the exact code,
// else its range (4XX), else default; nil if none.
func (o *Operation) Response(status int) *Response {
	exact, rng := strconv.Itoa(status), strconv.Itoa(status/100)+"XX"
	var byRange, byDefault *Response
	for _, r := range o.Responses {
		switch r.Code {
		case exact:
			return r
		case rng:
			byRange = r
		case "default":
			byDefault = r
		}
	}
	if byRange != nil {
		return byRange
	}
	return byDefault
}

// Documents reports whether the document gives a response for status,
// by its code, its range or a default response.
func (o *Operation) Documents(status int) bool { return o.Response(status) != nil }

// CheckResponse validates a response to the operation: its status is
// documented, its Content-Type is one the document gives, its documented
// headers are present and valid, and a JSON body is valid against the
// schema. Where the document gives no body for the status, any body is
// accepted: the contract says nothing about it.
func (o *Operation) CheckResponse(status int, header http.Header, body []byte) []Problem {
	r := o.Response(status)
	if r == nil {
		return []Problem{{Kind: KindResponse, Rule: RuleStatus, Message: fmt.Sprintf("status %d is not documented for %s (documented: %s)", status, o.Name(), strings.Join(o.Codes(), ", "))}}
	}
	var ps []Problem
	for _, h := range r.Headers {
		raw := header.Values(h.Name)
		if len(raw) == 0 {
			if h.Required {
				ps = append(ps, Problem{Kind: KindResponse, Rule: RuleResponseHeader, Field: h.Name, Message: "required header is missing"})
			}
			continue
		}
		for _, p := range h.check(raw) {
			p.Kind, p.Rule = KindResponse, RuleResponseHeader
			ps = append(ps, p)
		}
	}
	if len(r.MediaTypes) == 0 {
		return ps
	}
	ct := header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !slices.ContainsFunc(r.MediaTypes, func(want string) bool { return mediaTypeMatches(want, mt) }) {
		return append(ps, Problem{Kind: KindResponse, Rule: RuleResponseType, Field: "Content-Type", Message: fmt.Sprintf("%q; want %s", ct, strings.Join(r.MediaTypes, " or "))})
	}
	if !isJSON(mt) || r.Schema == nil {
		return ps
	}
	// A list is checked one item at a time where it can be: a long one is
	// never held decoded whole.
	found, ok := r.Schema.validateArrayJSON(body)
	if !ok {
		v, err := DecodeJSON(body)
		if err != nil {
			je := err.(*JSONError)
			return append(ps, Problem{Kind: KindResponse, Field: je.Field, Message: "body: " + je.Reason})
		}
		found = r.Schema.Validate(v)
	}
	for _, p := range found {
		p.Kind = KindResponse
		ps = append(ps, p)
	}
	return append(ps, r.Schema.IntegerNotation(body)...)
}

// Codes lists the documented response codes as the document writes them,
// such as 200, 4XX or default.
func (o *Operation) Codes() []string {
	return mapped(o.Responses, func(r *Response) string { return r.Code })
}

// Name names the operation: its operationId, or its method and path, such
// as "GET /pets/{petId}".
func (o *Operation) Name() string {
	if o == nil {
		return "no operation"
	}
	if o.ID != "" {
		return o.ID
	}
	return o.Method + " " + o.Path
}
