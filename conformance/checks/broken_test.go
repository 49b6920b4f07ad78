package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/petstore/inventory-kit/conformance"
	"github.com/petstore/inventory-kit/spec"
)

// A brokenServer is the mock with one rule of the contract broken. The
// suite run against it must fail the specs named in fails (substrings of
// the specs' full text), record the warnings in warns and report the
// failed restores in restores. One that names no failing spec must pass.
type brokenServer struct {
	name     string
	wrap     func(http.Handler) http.Handler
	fails    []string
	warns    []string
	restores []string
	timeout  time.Duration // per request in the child; 0: the default
	// exactly says the run fails the specs in fails and no other: one
	// defect, one failure.
	exactly bool
	// cause is the cause the exploration must name, where one is given.
	cause conformance.Cause
	// problems are lines the failures must show (substrings of a failure
	// message): a problem names its field and record.
	problems []string
}

var brokenServers = []brokenServer{
	{
		name:  "auth-ignored",
		wrap:  requests(func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testKey) }),
		fails: []string{"no Authorization header gives 401", "auth precedes lookup", "WWW-Authenticate challenge"},
	},
	{
		name: "empty-credential-accepted",
		wrap: requests(func(r *http.Request) {
			if v, ok := r.Header["Authorization"]; ok && (strings.TrimSpace(v[0]) == "" || strings.EqualFold(strings.TrimSpace(v[0]), "Bearer")) {
				r.Header.Set("Authorization", "Bearer "+testKey)
			}
		}),
		fails: []string{"Bearer without a token gives 401", "an empty Authorization header gives 401"},
	},
	{
		name: "any-bearer-token-accepted",
		wrap: requests(func(r *http.Request) {
			if s, tok, _ := strings.Cut(r.Header.Get("Authorization"), " "); strings.EqualFold(s, "Bearer") && tok != "" {
				r.Header.Set("Authorization", "Bearer "+testKey)
			}
		}),
		fails: []string{"an unknown key gives 401"},
	},
	{
		name: "scheme-ignored",
		wrap: requests(func(r *http.Request) {
			if _, tok, _ := strings.Cut(r.Header.Get("Authorization"), " "); tok == testKey {
				r.Header.Set("Authorization", "Bearer "+testKey)
			}
		}),
		fails: []string{"another scheme (Basic with the key) gives 401"},
	},
	{
		name: "query-key-accepted",
		wrap: requests(func(r *http.Request) {
			if r.URL.Query().Get("api_key") == testKey {
				r.Header.Set("Authorization", "Bearer "+testKey)
			}
		}),
		fails: []string{"the key only in the query string gives 401"},
	},
	{
		name: "bearer-case-sensitive",
		wrap: requests(func(r *http.Request) {
			if strings.HasPrefix(r.Header.Get("Authorization"), "bearer ") {
				r.Header.Set("Authorization", "Bearer rejected")
			}
		}),
		warns: []string{`the scheme word "bearer" in lower case`},
	},
	{
		name: "not-found-before-auth",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if id, ok := patchedPet(r); ok && !listed(h, id) {
					writeError(w, http.StatusNotFound, "not_found")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"auth precedes lookup"},
	},
	{
		name: "validation-before-auth",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPatch && !json.Valid(peekBody(r)) {
					writeError(w, http.StatusBadRequest, "invalid_body")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"auth precedes validation"},
	},
	{
		name:  "error-status-field-wrong",
		wrap:  errorBodies(func(e map[string]any) { e["status"] = 500 }),
		fails: []string{"401: the Error body", "400: the Error body", "no Authorization header gives 401"},
	},
	{
		name:  "error-code-empty",
		wrap:  errorBodies(func(e map[string]any) { e["code"] = "" }),
		fails: []string{"401: the Error body", "400: the Error body"},
	},
	{
		name: "content-type-text-plain",
		wrap: responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
			rec.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}),
		fails: []string{"Content-Type is application/json", "charset on Content-Type"},
	},
	{
		name: "list-item-unknown-status",
		wrap: lists(func(items []map[string]any) []map[string]any {
			items[0]["status"] = "lost"
			return items
		}),
		fails:   []string{"200 with an array of records valid against the contract"},
		exactly: true,
	},
	{
		// One bad record among good ones: the checks of the list's shape
		// fail, naming the record; the others note it and go on.
		name: "list-one-record-in-stock",
		wrap: lists(func(items []map[string]any) []map[string]any {
			for _, it := range items {
				if it["petId"] == float64(11) {
					it["status"] = "in_stock"
				}
			}
			return items
		}),
		fails:    []string{"200 with an array of records valid against the contract"},
		exactly:  true,
		problems: []string{`status: "in_stock" is not one of "available", "pending", "sold" (petId 11)`},
	},
	{
		// A record without its quantity: the problem names both.
		name: "list-record-without-quantity",
		wrap: lists(func(items []map[string]any) []map[string]any {
			for _, it := range items {
				if it["petId"] == float64(11) {
					delete(it, "quantity")
				}
			}
			return items
		}),
		fails:    []string{"200 with an array of records valid against the contract"},
		exactly:  true,
		problems: []string{"quantity: required (petId 11)"},
	},
	{
		// A float column: every quantity answered as 7.0, which OpenAPI
		// 3.0's integer is not.
		name:     "integers-as-decimals",
		wrap:     responses(func(_ *http.Request, rec *httptest.ResponseRecorder) { decimalQuantities(rec) }),
		fails:    []string{"200 with an array of records valid against the contract"},
		problems: []string{"quantity: 5.0 is written with a fraction or an exponent part: OpenAPI 3.0 defines integer as a JSON number without a fraction or an exponent part; write 5 (petId 1)"},
	},
	{
		name: "list-duplicate-pet",
		wrap: lists(func(items []map[string]any) []map[string]any {
			return append(items, items[0])
		}),
		fails: []string{"identifiers are unique"},
	},
	{
		// Pet 64 goes by petId 2^53+1, consistently in every request and
		// answer: a warning only (JavaScript clients lose digits).
		name: "list-huge-pet-id",
		wrap: func(h http.Handler) http.Handler {
			const huge, real = "9007199254740993", "64"
			inner := requests(func(r *http.Request) {
				switch rest, _ := strings.CutPrefix(r.URL.Path, "/v1/inventory/"); rest {
				case huge:
					r.URL.Path, r.URL.RawPath = "/v1/inventory/"+real, ""
				case real: // listed as huge only: 64 is no pet's
					r.URL.Path, r.URL.RawPath = "/v1/inventory/999999999", ""
				}
			})(h)
			return responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
				rec.Body = bytes.NewBuffer(bytes.ReplaceAll(rec.Body.Bytes(), []byte(`"petId":`+real+`,`), []byte(`"petId":`+huge+`,`)))
			})(inner)
		},
		warns: []string{"exceeds 2^53-1"},
	},
	{
		name:  "patch-not-persisted",
		wrap:  patchNotPersisted,
		fails: []string{"a following list shows the values written", "the same update twice gives the same result", "20 concurrent writes"},
	},
	{
		name: "patch-echoes-old-quantity",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				before, _ := findItem(listItemsOf(h), id)
				responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
					if ok && rec.Code == http.StatusOK {
						rewriteJSON(rec, func(m map[string]any) { m["quantity"] = before.Quantity })
					}
				})(h).ServeHTTP(w, r)
			})
		},
		fails: []string{"the answer has the same identifier and the values sent", "20 concurrent writes"},
	},
	{
		name: "status-flips-on-every-other-patch",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // guards n
			n := 0
			return responses(func(r *http.Request, rec *httptest.ResponseRecorder) {
				if r.Method != http.MethodPatch || rec.Code != http.StatusOK {
					return
				}
				mu.Lock()
				n++
				odd := n%2 == 1
				mu.Unlock()
				if odd {
					rewriteJSON(rec, func(m map[string]any) {
						m["status"] = map[any]string{"available": "sold", "sold": "pending", "pending": "available"}[m["status"]]
					})
				}
			})(h)
		},
		fails: []string{"the same update twice gives the same result"},
	},
	{
		name: "patch-touches-neighbour",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				body := peekBody(r)
				h.ServeHTTP(w, r)
				if ok && authorized(r) && listed(h, id) && listed(h, id+1) {
					serve(h, http.MethodPatch, "/v1/inventory/"+strconv.FormatInt(id+1, 10), body)
				}
			})
		},
		fails: []string{"no other record changes"},
	},
	{
		name: "unknown-pet-upserted",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if id, ok := patchedPet(r); ok && authorized(r) && !listed(h, id) {
					var u struct{ Quantity int64 }
					_ = json.Unmarshal(peekBody(r), &u)
					writeJSON(w, http.StatusOK, Item{PetID: id, Quantity: u.Quantity, Status: "available"})
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"an unknown but valid identifier gives 404"},
	},
	{
		name: "invalid-body-read-as-zero",
		wrap: requests(func(r *http.Request) {
			var u struct{ Quantity *int64 }
			if r.Method == http.MethodPatch && authorized(r) && (json.Unmarshal(peekBody(r), &u) != nil || u.Quantity == nil) {
				setBody(r, []byte(`{"quantity":0}`))
				r.Header.Set("Content-Type", "application/json")
			}
		}),
		fails: []string{"updateInventory: no body gives 400", "an empty object {} gives 400", "malformed JSON gives 400", "updateInventory: null gives 400",
			"an array gives 400", "a string gives 400", "quantity as a string gives 400", "quantity fractional gives 400", "quantity a boolean gives 400",
			"quantity null gives 400"},
	},
	{
		name: "rejects-but-writes",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				body := peekBody(r)
				h.ServeHTTP(w, r)
				var u struct{ Quantity *int64 }
				if ok && authorized(r) && (json.Unmarshal(body, &u) != nil || u.Quantity == nil) {
					serve(h, http.MethodPatch, "/v1/inventory/"+strconv.FormatInt(id, 10), []byte(`{"quantity":0}`))
				}
			})
		},
		fails: []string{"an empty object {} gives 400 and leaves the record unchanged", "quantity null gives 400 and leaves the record unchanged"},
	},
	{
		name: "bad-input-gets-422",
		wrap: responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
			if rec.Code == http.StatusBadRequest {
				rec.Code = http.StatusUnprocessableEntity
				rewriteJSON(rec, func(m map[string]any) { m["status"] = http.StatusUnprocessableEntity })
			}
		}),
		fails: []string{"malformed JSON gives 400", "petId abc gives 400", "400: the Error body"},
	},
	{
		name: "malformed-json-crashes",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPatch && authorized(r) && !json.Valid(peekBody(r)) && len(peekBody(r)) > 0 {
					http.Error(w, "runtime error: invalid memory address", http.StatusInternalServerError)
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"malformed JSON gives 400"},
	},
	{
		// Allowed (Prism): the seed shows no size limit, so a 4 MiB body
		// may be accepted.
		name: "no-body-size-limit",
		wrap: requests(func(r *http.Request) {
			if body := peekBody(r); r.Method == http.MethodPatch && len(body) > 1<<20 {
				var u struct{ Quantity int64 }
				_ = json.Unmarshal(body, &u)
				setBody(r, []byte(fmt.Sprintf(`{"quantity":%d}`, u.Quantity)))
			}
		}),
	},
	{
		name: "huge-body-crashes",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPatch && authorized(r) && len(peekBody(r)) > 1<<20 {
					writeError(w, http.StatusInternalServerError, "internal")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"a body of 4 MiB"},
	},
	{
		// Allowed (Prism): the operations without a shape answer 200 with
		// an empty body and no Content-Type, as the document allows.
		name: "shapeless-operations-empty-200",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if authorized(r) && (strings.HasPrefix(r.URL.Path, "/v1/pets/") || r.URL.Path == "/v1/store/orders") {
					w.Header()["Content-Type"] = nil
					w.Header().Set("Deprecation", "true")
					w.WriteHeader(http.StatusOK)
					return
				}
				h.ServeHTTP(w, r)
			})
		},
	},
	{
		// Allowed: the seed shows no bound on quantity, so a value past
		// int64 may be accepted (here: stored as the largest int64).
		name: "int64-overflow-accepted",
		wrap: requests(func(r *http.Request) {
			if body := peekBody(r); r.Method == http.MethodPatch && strings.Contains(string(body), "9223372036854775808") {
				setBody(r, []byte(strings.ReplaceAll(string(body), "9223372036854775808", "2147483647")))
			}
		}),
	},
	{
		// Prism's defect: Error bodies with placeholder values.
		name:  "error-placeholders",
		wrap:  errorBodies(func(e map[string]any) { e["status"] = 0; e["code"] = "string" }),
		fails: []string{"401: the Error body", "no Authorization header gives 401"},
	},
	{
		// Prism's defect: a PATCH with malformed JSON is never answered.
		name: "malformed-json-hangs",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if body := peekBody(r); r.Method == http.MethodPatch && authorized(r) && len(body) > 0 && !json.Valid(body) {
					select {
					case <-r.Context().Done():
					case <-time.After(3 * time.Second):
					}
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		timeout: 300 * time.Millisecond,
		fails:   []string{"malformed JSON gives 400"},
	},
	{
		name: "text-plain-crashes",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodPatch && authorized(r) && r.Header.Get("Content-Type") == "text/plain" {
					writeError(w, http.StatusInternalServerError, "internal")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"a JSON body sent as text/plain"},
	},
	{
		name:  "lost-updates",
		wrap:  lostUpdates,
		fails: []string{"20 concurrent writes each echo their own values"},
	},
	{
		name: "shapeless-operations-500",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if authorized(r) && (strings.HasPrefix(r.URL.Path, "/v1/pets/") || r.URL.Path == "/v1/store/orders") {
					writeError(w, http.StatusInternalServerError, "internal")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"GET /pets/{petId}: with the key, no 5xx other than 501", "GET /store/orders: with the key, no 5xx other than 501"},
	},
	{
		name: "pet-id-parsed-loosely",
		wrap: requests(func(r *http.Request) {
			rest, ok := strings.CutPrefix(r.URL.Path, "/v1/inventory/")
			if !ok {
				return
			}
			if _, err := strconv.ParseInt(rest, 10, 64); err == nil {
				return
			}
			digits := rest[:len(rest)-len(strings.TrimLeft(rest, "0123456789"))] // leading digits
			if _, err := strconv.ParseInt(digits, 10, 64); err != nil && digits != "" {
				digits = strconv.FormatInt(math.MaxInt64, 10)
			}
			if digits == "" {
				digits = "1"
			}
			r.URL.Path = "/v1/inventory/" + digits
			r.URL.RawPath = ""
		}),
		// "400: the Error body" sends no body with its malformed identifier
		// (nothing a loose reading could write), so the mock's own 400 for
		// the missing body answers it here. 2^63, read as the largest
		// int64, addresses no pet: its 404 is right.
		fails: []string{"petId abc gives 400", "petId 1.5 gives 400"},
	},
	{
		name: "silent-cases-crash",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body := string(peekBody(r))
				if r.Method == http.MethodPatch && authorized(r) && (strings.Contains(body, "-1") || strings.Contains(body, "5.0") ||
					strings.Contains(body, "conformanceNote") || strings.Count(body, "quantity") > 1 || strings.Contains(body, "21474836") || strings.Contains(body, "90071992")) {
					writeError(w, http.StatusInternalServerError, "internal")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"quantity -1 (negative)", "quantity 2147483648", "quantity 9007199254740993", "quantity written as a decimal", "an unknown extra field", "a field given twice"},
	},
	{
		// Allowed: a path segment that is no identifier addresses no pet,
		// so 404 with an Error body is as right as 400.
		name: "malformed-id-404",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if rest, ok := strings.CutPrefix(r.URL.Path, "/v1/inventory/"); ok && authorized(r) {
					if _, err := strconv.ParseInt(rest, 10, 64); err != nil {
						writeError(w, http.StatusNotFound, "not_found")
						return
					}
				}
				h.ServeHTTP(w, r)
			})
		},
	},
	{
		// The list breaks the contract before any check starts: the run
		// is made (exit 1, not 2), the list check fails, and the checks
		// that need a listed record are not judged.
		name: "list-wrapped",
		wrap: responses(func(r *http.Request, rec *httptest.ResponseRecorder) {
			if r.Method == http.MethodGet && r.URL.Path == "/v1/inventory" && rec.Code == http.StatusOK {
				rec.Body = bytes.NewBuffer(append(append([]byte(`{"items":`), rec.Body.Bytes()...), '}'))
			}
		}),
		fails:   []string{"200 with an array of records valid against the contract"},
		exactly: true,
	},
	{
		// Every list shows a new random record: the target cannot hold a
		// record still. One check says so; the ones that compare records
		// are not judged, and nothing is written or restored.
		name: "list-random-record",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // guards rng
			rng := rand.New(rand.NewPCG(1, 2))
			return lists(func(items []map[string]any) []map[string]any {
				mu.Lock()
				id, q := 1_000_000+rng.Int64N(1_000_000), rng.Int64N(1000)
				mu.Unlock()
				return append(items, map[string]any{"petId": id, "quantity": q, "status": "available"})
			})(h)
		},
		fails:   []string{"two lists with no write between them show the same records"},
		exactly: true,
	},
	{
		name: "patch-answers-201",
		wrap: responses(func(r *http.Request, rec *httptest.ResponseRecorder) {
			if r.Method == http.MethodPatch && rec.Code == http.StatusOK {
				rec.Code = http.StatusCreated
			}
		}),
		fails: []string{"record after an update", "the answer has the same identifier"},
	},
	{
		// Not broken: a rate limit now and then must not fail a run.
		name: "rate-limited-now-and-then",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // guards n
			n := 0
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				limited := n%25 == 0
				mu.Unlock()
				if limited {
					w.Header().Set("Retry-After", "0")
					writeError(w, http.StatusTooManyRequests, "rate_limited")
					return
				}
				h.ServeHTTP(w, r)
			})
		},
	},
	{
		// Only the first change to a pet is stored, so the restore cannot
		// work and must be reported with the petId and original quantity.
		name: "first-change-sticks",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // guards changed and serialises writes
			changed := map[int64]bool{}
			stick := patchNotPersisted(h)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				if !ok || !authorized(r) {
					h.ServeHTTP(w, r)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if changed[id] {
					stick.ServeHTTP(w, r)
					return
				}
				before, _ := findItem(listItemsOf(h), id)
				h.ServeHTTP(w, r)
				after, _ := findItem(listItemsOf(h), id)
				changed[id] = before != after
			})
		},
		fails:    []string{"a following list shows the values written"},
		restores: []string{"petId 1: could not restore quantity 5"},
	},
	{
		name: "no-www-authenticate",
		wrap: responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
			rec.Header().Del("WWW-Authenticate")
		}),
		warns: []string{"401 without a WWW-Authenticate header"},
	},
	{
		name: "no-deprecation-header",
		wrap: responses(func(_ *http.Request, rec *httptest.ResponseRecorder) {
			rec.Header().Del("Deprecation")
		}),
		warns: []string{"without a Deprecation header"},
	},
}

// variantServers serve the variant new-write-operation.yaml, whose
// POST /store/orders the mock answers 501: one serves it as the contract
// says, the others break it. TestVariants runs them; TestBrokenServers
// does not (on the embedded contract they break nothing).
var variantServers = []brokenServer{
	{name: "orders-served", wrap: orders(false, false)},
	{name: "orders-auth-ignored", wrap: orders(true, false), fails: []string{"placeOrder: no Authorization header gives 401"}},
	{name: "orders-wrong-shape", wrap: orders(false, true), fails: []string{"placeOrder: with the key and a body valid against its schema"}},
}

// orders serves POST /v1/store/orders: with the key (or any credential,
// authIgnored) 201 and an Order, one without its status (wrongShape).
func orders(authIgnored, wrongShape bool) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		var mu sync.Mutex // guards next
		next := int64(1)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != "/v1/store/orders" || (!authorized(r) && !authIgnored) {
				h.ServeHTTP(w, r)
				return
			}
			var o struct {
				PetID    *int64 `json:"petId"`
				Quantity *int64 `json:"quantity"`
			}
			if json.Unmarshal(peekBody(r), &o) != nil || o.PetID == nil || o.Quantity == nil {
				writeError(w, http.StatusBadRequest, "invalid_body")
				return
			}
			mu.Lock()
			id := next
			next++
			mu.Unlock()
			order := map[string]any{"id": id, "petId": *o.PetID, "quantity": *o.Quantity, "status": "placed"}
			if wrongShape {
				delete(order, "status")
			}
			writeJSON(w, http.StatusCreated, order)
		})
	}
}

// deepServers break a rule only in a sequence or at a value: the fixed
// checks may miss them, the exploration must find each of them, every
// run (TestExplorationProof), and name what happened. They are the bugs
// real backends have.
var deepServers = []brokenServer{
	{
		// Every fifth accepted update is answered as stored and dropped,
		// but never two in a row of one pet: of writes sent at once one
		// is always stored, so what the list shows is a write not stored,
		// not writes at once that lost one another.
		name: "write-lost-every-fifth",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // guards n and dropped
			n, dropped := 0, map[int64]bool{}
			drop := patchNotPersisted(h)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var u struct{ Quantity *int64 }
				if id, ok := patchedPet(r); ok && authorized(r) && json.Unmarshal(peekBody(r), &u) == nil && u.Quantity != nil && *u.Quantity >= 0 {
					mu.Lock()
					n++
					fifth := n%5 == 0 && !dropped[id]
					dropped[id] = fifth
					mu.Unlock()
					if fifth {
						drop.ServeHTTP(w, r)
						return
					}
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"random sequences of calls keep the model"},
		cause: spec.RuleWriteNotStored,
	},
	{
		// An update of a quantity above 700 also writes it to the record
		// listed next.
		name: "big-write-touches-next",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				body := peekBody(r)
				var u struct{ Quantity *int64 }
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				if ok && authorized(r) && rec.Code == http.StatusOK && json.Unmarshal(body, &u) == nil && u.Quantity != nil && *u.Quantity > 700 {
					items := listItemsOf(h)
					for i, it := range items {
						if it.PetID == id && i+1 < len(items) {
							serve(h, http.MethodPatch, "/v1/inventory/"+strconv.FormatInt(items[i+1].PetID, 10), []byte(fmt.Sprintf(`{"quantity":%d}`, *u.Quantity)))
						}
					}
				}
				copyRecorded(w, rec)
			})
		},
		fails: []string{"random sequences of calls keep the model"},
		cause: spec.RuleOtherChanged,
	},
	{
		// An identifier past 2^53 (which a double cannot hold) crashes
		// the lookup.
		name: "huge-id-crashes",
		wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seg := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
				if id, err := strconv.ParseInt(seg, 10, 64); err == nil && id > 1<<53 && authorized(r) && strings.Count(r.URL.Path, "/") == 3 {
					http.Error(w, "lookup: float64 overflow", http.StatusInternalServerError)
					return
				}
				h.ServeHTTP(w, r)
			})
		},
		fails: []string{"random sequences of calls keep the model"},
		cause: spec.RuleServerError,
	},
	{
		// A rejected body right after an accepted update of the same
		// record zeroes that record.
		name: "rejected-after-write-corrupts",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // guards wrote
			wrote := map[int64]bool{}
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				if !ok || !authorized(r) {
					h.ServeHTTP(w, r)
					return
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				mu.Lock()
				after := wrote[id]
				wrote[id] = rec.Code == http.StatusOK
				mu.Unlock()
				if after && rec.Code == http.StatusBadRequest {
					serve(h, http.MethodPatch, "/v1/inventory/"+strconv.FormatInt(id, 10), []byte(`{"quantity":0}`))
				}
				copyRecorded(w, rec)
			})
		},
		fails: []string{"random sequences of calls keep the model"},
		cause: spec.RuleRejectedChanged,
	},
	{
		// Stock kept as movements: an update reads the record, waits
		// for its far database, and adds the difference to what the
		// record holds then. Right one at a time; two at once leave the
		// sum of both differences (a lost update). The answers echo the
		// values sent, so only a later list shows it.
		name: "stock-set-by-difference",
		wrap: func(h http.Handler) http.Handler {
			var mu sync.Mutex // one adjustment at a time, as a database increment is
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				id, ok := patchedPet(r)
				var u struct{ Quantity *int64 }
				if !ok || !authorized(r) || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") || json.Unmarshal(peekBody(r), &u) != nil || u.Quantity == nil || *u.Quantity < 0 {
					h.ServeHTTP(w, r) // what it refuses, the mock refuses
					return
				}
				before, found := findItem(listItemsOf(h), id)
				if !found {
					h.ServeHTTP(w, r)
					return
				}
				time.Sleep(10 * time.Millisecond)
				mu.Lock()
				now, _ := findItem(listItemsOf(h), id)
				rec := serve(h, http.MethodPatch, r.URL.Path, []byte(fmt.Sprintf(`{"quantity":%d}`, max(now.Quantity+*u.Quantity-before.Quantity, 0))))
				mu.Unlock()
				var it Item
				if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &it) != nil {
					copyRecorded(w, rec)
					return
				}
				it.Quantity = *u.Quantity
				writeJSON(w, http.StatusOK, it)
			})
		},
		fails: []string{"random sequences of calls keep the model", "20 concurrent writes each echo their own values"},
		cause: spec.RuleLostUpdate,
	},
}

func brokenServerNamed(name string) (brokenServer, bool) {
	for _, b := range deepServers {
		if b.name == name {
			return b, true
		}
	}
	for _, b := range variantServers {
		if b.name == name {
			return b, true
		}
	}
	for _, b := range brokenServers {
		if b.name == name {
			return b, true
		}
	}
	return brokenServer{}, false
}
