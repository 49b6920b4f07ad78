package spec

import (
	"encoding/json"
	"fmt"
	"mime"
	"strconv"
	"strings"
)

// An envelope is the contract's Error body, read from the loaded document:
// the schema its documented error responses share, the integer field that
// carries the HTTP status, and the required text fields. The seed says
// every error response carries one, with status equal to the HTTP status.
type envelope struct {
	schema *Schema  // nil: the document has no Error schema, and no error-* rule applies
	status string   // the field holding the HTTP status, such as "status"; "" if none
	texts  []string // required string fields, such as code and message
}

// findEnvelope finds the component schema most documented error responses
// (4XX, 5XX, default) use, and its status and text fields.
func findEnvelope(c *Contract) envelope {
	counts := map[string]int{}
	best := ""
	for _, op := range c.Operations {
		for _, r := range op.Responses {
			if r.Schema == nil || r.Schema.Name == "" || !(r.Code == "default" || r.Code[0] == '4' || r.Code[0] == '5') {
				continue
			}
			counts[r.Schema.Name]++
			if best == "" || counts[r.Schema.Name] > counts[best] {
				best = r.Schema.Name
			}
		}
	}
	e := envelope{schema: c.Schema(best)}
	if e.schema == nil {
		return envelope{}
	}
	for _, name := range e.schema.PropertyNames() {
		p := e.schema.Property(name)
		if p == nil {
			continue
		}
		switch {
		case p.Type() == "integer" && e.status == "" && (name == "status" || strings.Contains(strings.ToLower(p.Model.Description), "http status")):
			e.status = name
		case p.Type() == "string" && e.schema.Requires(name):
			e.texts = append(e.texts, name)
		}
	}
	return e
}

// check applies the envelope's rules to an error answer: status is the
// HTTP status, the required text fields are not empty, and, where the
// operation documents no response for the status (documented false), the
// body is an Error at all.
func (e envelope) check(status int, contentType string, body []byte, documented bool) []Violation {
	if e.schema == nil || status < 400 {
		return nil
	}
	var vs []Violation
	if !documented {
		mt, _, _ := mime.ParseMediaType(contentType)
		if mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return []Violation{{Rule: RuleErrorBody, Path: "header.Content-Type", Message: fmt.Sprintf("Content-Type %q: every error carries an %s body, sent as application/json", contentType, e.schema.Name)}}
		}
		for _, p := range e.schema.ValidateJSON(body) {
			vs = append(vs, Violation{Rule: RuleErrorBody, Path: Under("$", p.Field), Message: fmt.Sprintf("not an %s body: %s", e.schema.Name, p.Message)})
		}
		if len(vs) > 0 {
			return vs
		}
	}
	v, err := DecodeJSON(body)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return vs // the schema check says what is wrong
	}
	if e.status != "" {
		if n, ok := obj[e.status].(json.Number); ok {
			if got, err := strconv.ParseInt(n.String(), 10, 64); err != nil || got != int64(status) {
				vs = append(vs, Violation{Rule: RuleErrorStatus, Path: "$." + e.status, Message: fmt.Sprintf("%s is %s; want the HTTP status %d", e.status, n, status)})
			}
		}
	}
	for _, name := range e.texts {
		if s, ok := obj[name].(string); ok && strings.TrimSpace(s) == "" {
			vs = append(vs, Violation{Rule: RuleErrorFieldEmpty, Path: "$." + name, Message: fmt.Sprintf("%s is empty; the %s body's %s is required text", name, e.schema.Name, name)})
		}
	}
	return vs
}
