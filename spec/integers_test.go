package spec

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// TestIntegerNotation: an integer written 7.0 or 7e0 breaks an OpenAPI
// 3.0.x contract, names its record's field, and is a warning under 3.1.
func TestIntegerNotation(t *testing.T) {
	v30, err := Shared()
	if err != nil {
		t.Fatal(err)
	}
	v31, err := Load(bytes.Replace(Document, []byte("openapi: 3.0.3"), []byte("openapi: 3.1.0"), 1))
	if err != nil {
		t.Fatal(err)
	}
	list := `[{"petId":1,"quantity":5,"status":"available"},{"petId":11,"quantity":QTY,"status":"available"}]`
	for _, tc := range []struct {
		name     string
		contract *Contract
		quantity string
		want     []string // rule and path of each violation
	}{
		{"3.0, 7", v30, "7", nil},
		{"3.0, 7.0", v30, "7.0", []string{RuleIntegerNotation + " $[1].quantity"}},
		{"3.0, 7e0", v30, "7e0", []string{RuleIntegerNotation + " $[1].quantity"}},
		{"3.0, 70E-1", v30, "70E-1", []string{RuleIntegerNotation + " $[1].quantity"}},
		{"3.0, -0", v30, "-0", nil},
		{"3.0, 7.5 (not an integer at all)", v30, "7.5", []string{RuleResponseBody + " $[1].quantity", RuleIntegerNotation + " $[1].quantity"}},
		{"3.1, 7.0", v31, "7.0", []string{RuleIntegerNotation31 + " $[1].quantity"}},
		{"3.1, 7", v31, "7", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := NewJudge(tc.contract, nil)
			body := strings.Replace(list, "QTY", tc.quantity, 1)
			x := exchangeOf(http.MethodGet, "/v1/inventory", "", nil, 200, appJSON, body)
			_, vs := j.Exchange(x)
			var got []string
			for _, v := range vs {
				got = append(got, v.Rule+" "+v.Path)
				if v.Rule == RuleIntegerNotation && !strings.Contains(v.Message, "OpenAPI 3.0") {
					t.Errorf("message %q does not say which rule of OpenAPI it breaks", v.Message)
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.want, ", ") {
				t.Errorf("violations = %q; want %q", got, tc.want)
			}
		})
	}
	if Severity(RuleIntegerNotation) != SeverityError || Severity(RuleIntegerNotation31) != SeverityWarning {
		t.Error("integer notation: want an error under 3.0 and a warning under 3.1")
	}
}
