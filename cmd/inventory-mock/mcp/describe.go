package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver"
	"github.com/petstore/inventory-kit/spec"
)

// A silence is a question the contract leaves open, and the mock's answer.
type silence struct {
	Operation string `json:"operation,omitempty"`
	Question  string `json:"question"`
	Choice    string `json:"choice"`
}

// describe answers describe_contract: the admin API's description of the
// contract (GET /__admin/contract, the dashboard's), with silent (what the
// mock chooses where the contract is silent), warnings (operations not
// served as the contract describes them) and notes (served in a way the
// contract allows but a user may not expect).
func (a *admin) describe(ctx context.Context) (output, error) {
	b, err := a.call(ctx, http.MethodGet, "/contract", nil, nil)
	if err != nil {
		return nil, err
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, err
	}
	d["silent"] = silences(a.m.Contract())
	d["warnings"] = append([]string{}, a.m.Warnings()...)
	d["notes"] = append([]string{}, a.m.Notes()...)
	return d, nil
}

// silences reads, from the contract's structure, the questions it leaves
// open that the mock has to answer, with the mock's answer: the order of
// the list, integer fields without bounds, unknown fields in the update
// body, and for each operation the statuses the mock may answer that the
// operation does not document.
func silences(c *spec.Contract) []silence {
	out := []silence{}
	inv, err := c.Inventory()
	if err == nil {
		if inv.List != nil {
			out = append(out, silence{Operation: inv.List.Name(), Question: "the order of the list",
				Choice: fmt.Sprintf("ascending %s, stable", inv.Key)})
		}
		for _, f := range inv.Record.Fields {
			if f.Facts == nil || f.Type != "integer" || f.Name == inv.Key || (f.Min != nil && f.Max != nil) {
				continue
			}
			out = append(out, silence{Question: fmt.Sprintf("the bounds of %s.%s", inv.Record.Schema.Name, f.Name), Choice: bounds(f, inv.Body)})
		}
		if inv.Update != nil && inv.Body != nil && inv.Body.Facts != nil && !inv.Body.Closed {
			out = append(out, silence{Operation: inv.Update.Name(), Question: "fields of the update body its schema does not name",
				Choice: "ignored; a field the update's schema and the record both have is applied"})
		}
	}
	for _, op := range c.Operations {
		for _, s := range undocumented(op) {
			out = append(out, silence{Operation: op.Name(), Question: s[0], Choice: s[1]})
		}
	}
	return out
}

// bounds says what bounds the mock keeps an integer field within where
// the record schema gives none: the update body's, else its own.
func bounds(f *spec.Field, body *spec.Object) string {
	var parts []string
	up := body.Field(f.Name)
	if f.Min == nil {
		if up != nil && up.Min != nil {
			parts = append(parts, "the update body's minimum, "+up.Min.Value.RatString())
		} else {
			parts = append(parts, fmt.Sprintf("at least %d (the mock's own minimum)", fixtures.DefaultMinimum))
		}
	}
	if f.Max == nil {
		switch {
		case up != nil && up.Max != nil:
			parts = append(parts, "the update body's maximum, "+up.Max.Value.RatString())
		case f.Format == "int64":
			parts = append(parts, fmt.Sprintf("at most %d (the mock's own maximum, int64)", int64(math.MaxInt64)))
		default:
			parts = append(parts, fmt.Sprintf("at most %d (the mock's own maximum, a 32-bit column)", fixtures.DefaultMaximum))
		}
	}
	return strings.Join(parts, "; ") + "; outside them a write is 400 invalid_body"
}

// undocumented returns, for an operation, the statuses the mock may
// answer that the operation does not document, each as a question and
// the mock's choice.
func undocumented(op *spec.Operation) [][2]string {
	var out [][2]string
	add := func(status int, question, choice string) {
		if !op.Documents(status) {
			out = append(out, [2]string{fmt.Sprintf("%s (status %d, not documented for this operation)", question, status), choice})
		}
	}
	add(http.StatusUnauthorized, "a request without a valid API key", "401 unauthorized with an Error body and a Bearer challenge, before any other check")
	if len(op.Params) > 0 || op.Body != nil {
		add(http.StatusBadRequest, "a request the contract's schemas refuse", "400 with an Error body naming the parameter or field")
	}
	if slices.ContainsFunc(op.Params, func(p *spec.Param) bool { return p.In == "path" }) {
		add(http.StatusNotFound, "a key that names no record", "404 not_found with an Error body")
	}
	add(http.StatusTooManyRequests, "past the rate limit, when one is set", "429 too_many_requests with Retry-After and an Error body")
	add(http.StatusServiceUnavailable, "a status fault of a chaos rule", "the status the rule gives, with an Error body; only while the rule is in force")
	if op.Deprecated {
		out = append(out, [2]string{"when the deprecated operation goes away (its Sunset)", "not given: the mock answers Deprecation: true and no Sunset header"})
	}
	if op.Stability != "" {
		out = append(out, [2]string{"how a client learns the operation is " + op.Stability, "every answer carries " + mockserver.StabilityHeader + ": " + op.Stability})
	}
	return out
}
