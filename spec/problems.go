package spec

import (
	"cmp"
	"strings"

	verrors "github.com/pb33f/libopenapi-validator/errors"
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
	// Rule names the rule broken where it is not the one the Kind and the
	// side give (such as RuleIntegerNotation); "" otherwise.
	Rule string
}

// String renders the problem as "field: message", or the message alone.
func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// Join renders problems as one line, separated by "; ".
func Join(ps []Problem) string { return strings.Join(mapped(ps, Problem.String), "; ") }

// mapped returns f of each of xs.
func mapped[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// describeDocumentError renders an error found while checking the document
// itself against the OpenAPI schema, with the place it points at.
func describeDocumentError(e *verrors.ValidationError) string {
	var b strings.Builder
	b.WriteString(cmp.Or(e.Reason, e.Message))
	for _, s := range e.SchemaValidationErrors {
		b.WriteString("\n    ")
		if s.FieldPath != "" {
			b.WriteString(s.FieldPath + ": ")
		}
		b.WriteString(s.Reason)
	}
	return b.String()
}
