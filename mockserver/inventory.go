package mockserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
)

// The quantities the mock accepts. The contract gives no bounds; a stock
// count is not negative, and the mock keeps it within a 32-bit signed
// integer, the usual column type of a real service's database.
const (
	MinQuantity = 0
	MaxQuantity = math.MaxInt32
)

// listInventory answers GET /inventory: every record, ascending by petId.
func (s *Server) listInventory(w http.ResponseWriter, r *http.Request, _ []byte) {
	writeJSON(w, http.StatusOK, s.store.ListJSON())
}

// updateInventory answers PATCH /inventory/{petId}: it sets the pet's
// quantity and returns the updated record. The status is not changed.
func (s *Server) updateInventory(w http.ResponseWriter, r *http.Request, body []byte) {
	raw := r.PathValue("petId")
	petID, err := strconv.ParseInt(raw, 10, 64)
	if err != nil { // the contract's validation lets only int64 values through
		writeError(w, http.StatusBadRequest, CodeInvalidParameter, fmt.Sprintf("petId: %q is not an int64 integer", raw))
		return
	}
	quantity, problem := parseInventoryUpdate(body)
	if problem != "" {
		writeError(w, http.StatusBadRequest, CodeInvalidBody, problem)
		return
	}
	item, ok := s.store.SetQuantity(petID, quantity)
	if !ok {
		writeError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no pet with petId %d", petID))
		return
	}
	b := appendItem(make([]byte, 0, 64), item)
	writeJSON(w, http.StatusOK, append(b, '\n'))
}

// parseInventoryUpdate reads an InventoryUpdate body that has passed the
// contract's schema, and applies the rules the contract leaves to the
// service: no field twice, and a quantity that is a whole number from
// MinQuantity to MaxQuantity (5.0 counts as 5). Unknown fields are ignored.
func parseInventoryUpdate(body []byte) (quantity int64, problem string) {
	if q, ok := plainUpdate(body); ok {
		return q, ""
	}
	return decodeInventoryUpdate(body)
}

// decodeInventoryUpdate is parseInventoryUpdate for any body, with a JSON
// decoder.
func decodeInventoryUpdate(body []byte) (quantity int64, problem string) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, "body: want a JSON object"
	}
	var seen []string
	var number json.Number
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0, "body: malformed JSON"
		}
		key, _ := t.(string)
		for _, k := range seen {
			if k == key {
				return 0, fmt.Sprintf("body: field %q appears more than once", key)
			}
		}
		seen = append(seen, key)
		var v any
		if err := dec.Decode(&v); err != nil {
			return 0, "body: malformed JSON"
		}
		if key == "quantity" {
			number, found = v.(json.Number)
		}
	}
	if !found {
		return 0, "quantity: required, want an integer"
	}
	return parseQuantity(number)
}

// plainUpdate reads the body almost every client sends, {"quantity":N}
// with N a plain non-negative integer within bounds, with optional spaces,
// without the cost of a JSON decoder. It reports false for anything else,
// which parseInventoryUpdate then reads in full: it never accepts a body
// the full reading would refuse, nor reads one differently.
func plainUpdate(b []byte) (int64, bool) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	const key = `"quantity"`
	if len(b)-i < len(key) || string(b[i:i+len(key)]) != key {
		return 0, false
	}
	i = skipSpace(b, i+len(key))
	if i == len(b) || b[i] != ':' {
		return 0, false
	}
	i = skipSpace(b, i+1)
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	digits := b[start:i]
	// At most 10 digits, and no leading zero: JSON forbids 012, and
	// MaxQuantity has 10 digits.
	if len(digits) == 0 || len(digits) > 10 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	i = skipSpace(b, i)
	if i == len(b) || b[i] != '}' || skipSpace(b, i+1) != len(b) {
		return 0, false
	}
	var q int64
	for _, d := range digits {
		q = q*10 + int64(d-'0')
	}
	if q < MinQuantity || q > MaxQuantity {
		return 0, false
	}
	return q, true
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// parseQuantity checks a JSON number against the mock's quantity rules.
func parseQuantity(n json.Number) (int64, string) {
	bounds := fmt.Sprintf("must be between %d and %d", MinQuantity, MaxQuantity)
	if q, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		if q < MinQuantity || q > MaxQuantity {
			return 0, fmt.Sprintf("quantity: %d is out of range; %s", q, bounds)
		}
		return q, ""
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	switch {
	case err != nil && !math.IsInf(f, 0):
		return 0, fmt.Sprintf("quantity: %s is not a number", n)
	case f != math.Trunc(f):
		return 0, fmt.Sprintf("quantity: %s is not a whole number", n)
	case f < MinQuantity || f > MaxQuantity:
		return 0, fmt.Sprintf("quantity: %s is out of range; %s", n, bounds)
	}
	return int64(f), ""
}
