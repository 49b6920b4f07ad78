package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/petstore/inventory-kit/spec"
)

// TestPreferUndocumentedCode checks, on a contract whose list documents no
// default response, that Prefer cannot force a status the contract does
// not document: a clear 400 that lists the documented ones. (The embedded
// contract documents a default response for every operation.)
func TestPreferUndocumentedCode(t *testing.T) {
	doc := strings.Replace(string(spec.Document), "                    - {petId: 3, quantity: 0, status: sold}\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n        default:\n          $ref: '#/components/responses/OtherError'\n",
		"                    - {petId: 3, quantity: 0, status: sold}\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n", 1)
	if doc == string(spec.Document) {
		t.Fatal("the list's default response is not where it was")
	}
	c, err := spec.Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(cfg *Config) { cfg.Contract = c })
	r := httptest.NewRequest("GET", "/v1/inventory", nil)
	r.Header.Set("Authorization", "Bearer "+testKey)
	r.Header.Set("Prefer", "code=500")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, r)
	var e errorBody
	json.Unmarshal(rec.Body.Bytes(), &e)
	if rec.Code != http.StatusBadRequest || e.Code != httpapi.CodeInvalidPreference || e.Message != "Prefer: code=500 is not documented for listInventory (documented: 200, 401)" {
		t.Errorf("Prefer: code=500: %d %s; want 400 %s listing the documented statuses", rec.Code, rec.Body, httpapi.CodeInvalidPreference)
	}
}
