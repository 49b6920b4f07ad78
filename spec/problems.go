package spec

import (
	"strings"

	verrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
)

// Kinds of Problem, from the part of the request or response that broke the document.
const (
	KindPath        = "path"         // no path in the document matches
	KindMethod      = "method"       // the path exists but not with this method
	KindParameter   = "parameter"    // a path, query, header or cookie parameter
	KindContentType = "content-type" // a request content type the operation does not accept
	KindBody        = "body"         // the request body
	KindResponse    = "response"     // the response status, headers or body
	KindSchema      = "schema"       // a value checked against a component schema
)

// A Problem is one way a request, response or value breaks the document, in
// words a person reading an error body or a test report understands.
type Problem struct {
	Kind    string // one of the Kind constants
	Field   string // the parameter or JSON field, such as "petId" or "quantity"; empty for the whole
	Message string // what was wrong, such as "got string, want integer"
}

// String renders the problem as "field: message", or the message alone.
func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// Join renders problems as one line, separated by "; ".
func Join(ps []Problem) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// problems turns libopenapi-validator errors into Problems. A schema error
// becomes one Problem for each failing field.
func problems(errs []*verrors.ValidationError) []Problem {
	var out []Problem
	for _, e := range errs {
		kind := kindOf(e)
		if len(e.SchemaValidationErrors) == 0 {
			out = append(out, Problem{Kind: kind, Field: e.ParameterName, Message: sentence(firstNonEmpty(e.Reason, e.Message))})
			continue
		}
		for _, s := range e.SchemaValidationErrors {
			field := strings.TrimPrefix(strings.TrimPrefix(s.FieldPath, "$"), ".")
			if e.ParameterName != "" {
				field = e.ParameterName
			}
			out = append(out, Problem{Kind: kind, Field: field, Message: sentence(s.Reason)})
		}
	}
	return out
}

func kindOf(e *verrors.ValidationError) string {
	switch e.ValidationType {
	case helpers.PathValidation:
		if e.ValidationSubType == helpers.ValidationMissingOperation {
			return KindMethod
		}
		return KindPath
	case helpers.ParameterValidation:
		return KindParameter
	case helpers.RequestBodyValidation:
		if e.ValidationSubType == helpers.RequestBodyContentType {
			return KindContentType
		}
		return KindBody
	case helpers.ResponseBodyValidation:
		return KindResponse
	default:
		return KindSchema
	}
}

// sentence lower-cases the first letter so a reason reads well after "field: ".
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 1 && s[0] >= 'A' && s[0] <= 'Z' && !(s[1] >= 'A' && s[1] <= 'Z') {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// describeDocumentError renders an error found while checking the document
// itself against the OpenAPI schema, with the place it points at.
func describeDocumentError(e *verrors.ValidationError) string {
	var b strings.Builder
	b.WriteString(firstNonEmpty(e.Reason, e.Message))
	for _, s := range e.SchemaValidationErrors {
		b.WriteString("\n    ")
		if s.FieldPath != "" {
			b.WriteString(s.FieldPath + ": ")
		}
		b.WriteString(s.Reason)
	}
	return b.String()
}
