package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/inventory-kit/mockserver/store"
	"github.com/petstore/inventory-kit/spec"
)

// The records of a session as the dashboard reads and writes them: GET
// /__admin/records pages through them, sorted and filtered by any field
// of the record schema; PATCH /__admin/records/{key} writes one through
// the contract's own update.

// Bounds of a page of records.
const (
	defaultRecordLimit = 50
	maxRecordLimit     = 1000
)

// A recordPage is the answer of GET /__admin/records.
type recordPage struct {
	Total   int               `json:"total"` // records that pass the filters
	Offset  int               `json:"offset"`
	Limit   int               `json:"limit"`
	Records []json.RawMessage `json:"records"`
}

// A recordQuery is what GET /__admin/records asks for.
type recordQuery struct {
	offset, limit int
	sort          string // a field of the record; "" for the key
	desc          bool
	filters       []recordFilter
}

// A recordFilter keeps the records whose field has a value.
type recordFilter struct {
	field, value string
}

// listRecords answers one page of a session's records, the cheapest way
// the query allows:
//   - a filter on the key (the dashboard's "Find petId") reads that one
//     record from the store;
//   - without a sort field or a filter the page is cut from the list as the
//     store keeps it, in key order, without reading a record;
//   - otherwise the fields the query needs are read from every record,
//     which is filtered and sorted: a dashboard's request, not an API one
//     (BenchmarkRecords100k measures each case over 100,000 pets).
func (s *Server) listRecords(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
	session, ok := s.adminSession(w, r, store.DefaultSession)
	if !ok {
		return
	}
	q, err := s.recordQuery(r.URL.Query())
	if err != nil {
		httpapi.WriteError(w, r, http.StatusBadRequest, httpapi.CodeInvalidParameter, err.Error())
		return
	}
	page := recordPage{Offset: q.offset, Limit: q.limit, Records: []json.RawMessage{}}
	var rows []json.RawMessage // the page's records
	if i := slices.IndexFunc(q.filters, func(f recordFilter) bool { return f.field == s.shape.Key }); i >= 0 {
		rows, err = s.recordByKey(r, session, q.filters[i].value, q)
		page.Total, rows = len(rows), rows[min(q.offset, len(rows)):]
	} else if l, lerr := s.store.List(r.Context(), session); lerr != nil {
		err = lerr
	} else if (q.sort == "" || q.sort == s.shape.Key) && len(q.filters) == 0 {
		page.Total, rows = l.Len(), cutList(l, q)
	} else {
		page.Total, rows, err = s.sortRecords(l, q)
	}
	if err != nil {
		if errors.Is(err, errBadRecord) {
			httpapi.WriteError(w, r, http.StatusInternalServerError, httpapi.CodeInternal, err.Error())
		} else {
			s.writeStoreError(w, r, err)
		}
		return
	}
	for _, raw := range rows {
		page.Records = append(page.Records, s.reshape.record(raw)) // as the contract in force serves them
	}
	httpapi.WriteValue(w, r, http.StatusOK, page)
}

// errBadRecord wraps a stored record the page cannot read.
var errBadRecord = errors.New("reading a stored record")

// recordByKey returns the one record whose key is the text value (a
// number, checked by recordQuery: 5 and 5.0 name the same record), if it
// is stored and passes q's other filters too.
func (s *Server) recordByKey(r *http.Request, session, value string, q recordQuery) ([]json.RawMessage, error) {
	n, ok := new(big.Rat).SetString(value)
	if !ok || !n.IsInt() || !n.Num().IsInt64() {
		return nil, nil // no record has a key that is not an int64
	}
	rec, err := s.store.Get(r.Context(), session, n.Num().Int64())
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	values, err := q.reader().read(rec.JSON)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadRecord, err)
	}
	if !matches(values, q.filters) {
		return nil, nil
	}
	return []json.RawMessage{rec.JSON}, nil
}

// cutList returns the page q asks for of a list in key order, ascending or
// descending, reading no record outside it.
func cutList(l store.List, q recordQuery) []json.RawMessage {
	lo, hi := q.offset, q.offset+q.limit // positions in the requested order
	if q.desc {
		lo, hi = l.Len()-hi, l.Len()-q.offset
	}
	out := []json.RawMessage{}
	i := 0
	for rec := range l.All() {
		if i >= hi {
			break
		}
		if i >= lo {
			out = append(out, rec)
		}
		i++
	}
	if q.desc {
		slices.Reverse(out)
	}
	return out
}

// sortRecords reads the fields q needs from every record of l, and returns
// how many pass its filters and, in the order it asks for, those of its
// page.
func (s *Server) sortRecords(l store.List, q recordQuery) (int, []json.RawMessage, error) {
	// A row is a record that passed, with its place in key order, which
	// breaks ties: records with equal values stay in key order, both ways,
	// and no two rows compare equal.
	type row struct {
		raw json.RawMessage
		pos int
		key sortKey
	}
	compare := func(a, b row) int {
		c := a.key.compare(b.key)
		if q.sort == "" { // key order, read from the list: the rows come in it
			c = cmp.Compare(a.pos, b.pos)
		}
		if q.desc {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(a.pos, b.pos))
	}
	// The first pages, which the dashboard asks for most, keep only the
	// rows up to the page's end; a page deep in the list sorts them all.
	end := q.offset + q.limit
	rows := &least[row]{compare: compare, n: end}
	if end > l.Len()/4 {
		rows.n = -1
	}
	fr := q.reader()
	enum := enumOf(s.shape.Schema.Property(q.sort)) // the order of a string field's values, if it has one
	total, pos := 0, 0
	for raw := range l.All() {
		pos++
		values, err := fr.read(raw)
		if err != nil {
			return 0, nil, fmt.Errorf("%w: %v", errBadRecord, err)
		}
		if !matches(values, q.filters) {
			continue
		}
		total++
		rw := row{raw: raw, pos: pos}
		if q.sort != "" {
			rw.key = keyOf(values[len(q.filters)], enum)
		}
		rows.add(rw)
	}
	sorted := rows.sorted()
	var out []json.RawMessage
	for _, rw := range sorted[min(q.offset, len(sorted)):min(end, len(sorted))] {
		out = append(out, rw.raw)
	}
	return total, out, nil
}

// reader reads the fields q needs of a record: the filters' (value i for
// filter i), then the sort field's.
func (q recordQuery) reader() *fieldReader {
	var names []string
	for _, f := range q.filters {
		names = append(names, f.field)
	}
	if q.sort != "" {
		names = append(names, q.sort)
	}
	return newFieldReader(names)
}

// least keeps the n least of the values added, by compare, which orders
// no two values as equal; all of them where n is negative. It holds at
// most 2n: at 2n it sorts them and keeps the lesser half, whose greatest
// is then a bound. A value past the bound costs one comparison; one kept,
// O(log n) on average.
type least[T any] struct {
	compare func(a, b T) int
	n       int
	kept    []T
	bound   bool // kept[n-1] is the greatest of the n least so far
}

func (l *least[T]) add(v T) {
	if l.bound && l.compare(v, l.kept[l.n-1]) > 0 {
		return
	}
	l.kept = append(l.kept, v)
	if l.n >= 0 && len(l.kept) > 2*l.n {
		l.sorted()
	}
}

// sorted returns the values kept, least first.
func (l *least[T]) sorted() []T {
	slices.SortFunc(l.kept, l.compare)
	if l.n >= 0 && len(l.kept) >= l.n {
		l.kept, l.bound = l.kept[:l.n], l.n > 0
	}
	return l.kept
}

// recordQuery reads the query of GET /__admin/records. The admin document
// has checked the types and ranges; the field names and values are checked
// here against the loaded record schema.
func (s *Server) recordQuery(v url.Values) (recordQuery, error) {
	q := recordQuery{offset: max(intParam(v, "offset", 0), 0), limit: min(max(intParam(v, "limit", defaultRecordLimit), 1), maxRecordLimit)}
	q.desc = v.Get("order") == "desc"
	if q.sort = v.Get("sort"); q.sort != "" && !s.shape.Has(q.sort) {
		return q, fmt.Errorf("sort: %s has no field %q; it has %s", s.shape.Schema.Name, q.sort, strings.Join(s.shape.Fields, ", "))
	}
	for _, f := range v["filter"] {
		field, value, ok := strings.Cut(f, ":")
		if !ok {
			return q, fmt.Errorf("filter %q: want FIELD:VALUE, such as status:sold", f)
		}
		if err := s.checkFilter(field, value); err != nil {
			return q, fmt.Errorf("filter %q: %v", f, err)
		}
		q.filters = append(q.filters, recordFilter{field: field, value: value})
	}
	return q, nil
}

// intParam reads an integer query parameter of an admin request, which
// the admin document has checked; def where it is absent.
func intParam(v url.Values, name string, def int) int {
	if s := v.Get(name); s != "" {
		def, _ = strconv.Atoi(s)
	}
	return def
}

// checkFilter checks that a filter's value is one the field can have: one
// of its enum where the schema gives one, a number for a number.
func (s *Server) checkFilter(field, value string) error {
	if !s.shape.Has(field) {
		return fmt.Errorf("%s has no field %q; it has %s", s.shape.Schema.Name, field, strings.Join(s.shape.Fields, ", "))
	}
	ps := s.shape.Schema.Property(field)
	if enum := enumOf(ps); len(enum) > 0 {
		if !slices.Contains(enum, value) {
			return fmt.Errorf("%s is one of %s", field, strings.Join(enum, ", "))
		}
		return nil
	}
	switch t := ps.Type(); t {
	case "integer", "number":
		if _, ok := new(big.Rat).SetString(value); !ok {
			return fmt.Errorf("%s is a number; %q is not", field, value)
		}
	case "boolean":
		if value != "true" && value != "false" {
			return fmt.Errorf("%s is true or false; %q is neither", field, value)
		}
	}
	return nil
}

// enumOf returns the values a schema's enum allows, as text; nil if it
// has none.
func enumOf(s *spec.Schema) []string {
	if s == nil || s.Model == nil {
		return nil
	}
	var out []string
	for _, n := range s.Model.Enum {
		if n != nil {
			out = append(out, n.Value)
		}
	}
	return out
}

// matches reports whether a record passes every filter; values[i] is its
// value of filter i's field.
func matches(values []any, filters []recordFilter) bool {
	for i, f := range filters {
		if !valueIs(values[i], f.value) {
			return false
		}
	}
	return true
}

// valueIs reports whether a decoded JSON value is the value text names:
// equal strings, equal numbers (5 and 5.0 are equal), true or false, null.
func valueIs(v any, text string) bool {
	switch v := v.(type) {
	case string:
		return v == text
	case json.Number:
		a, ok1 := new(big.Rat).SetString(string(v))
		b, ok2 := new(big.Rat).SetString(text)
		return ok1 && ok2 && a.Cmp(b) == 0
	case bool:
		return strconv.FormatBool(v) == text
	case nil:
		return text == "null"
	}
	return string(spec.AppendJSON(nil, v)) == text
}

// A sortKey is a field's value made comparable: numbers as numbers (enum
// values as their place in the schema's order, false and true as 0 and
// 1), then other values as text; a record without the field sorts last.
type sortKey struct {
	rank  int   // 0: a number, 1: text, 2: missing
	i     int64 // the number, where it is an int64 (isInt)
	isInt bool
	num   float64
	text  string
}

func intKey(i int64) sortKey { return sortKey{i: i, isInt: true, num: float64(i)} }

// keyOf makes the sort key of a value; enum is the order of a string
// field's values, if it has one.
func keyOf(v any, enum []string) sortKey {
	switch v := v.(type) {
	case nil:
		return sortKey{rank: 2}
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return intKey(i)
		}
		f, _ := strconv.ParseFloat(string(v), 64)
		return sortKey{num: f}
	case string:
		if i := slices.Index(enum, v); i >= 0 {
			return intKey(int64(i))
		}
		return sortKey{rank: 1, text: v}
	case bool:
		if v {
			return intKey(1)
		}
		return intKey(0)
	}
	return sortKey{rank: 1, text: string(spec.AppendJSON(nil, v))}
}

func (a sortKey) compare(b sortKey) int {
	switch {
	case a.rank != b.rank || a.rank > 0:
		return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.text, b.text))
	case a.isInt && b.isInt:
		return cmp.Compare(a.i, b.i)
	}
	return cmp.Compare(a.num, b.num)
}

// updateRecord returns the handler of PATCH /__admin/records/{key}: the
// dashboard's write of one record. The admin key is not an API key, so
// the dashboard cannot call the contract's update itself; this sends the
// request through the update operation's own wrapper and handler, built
// here by the same calls that build the API's: the contract's validation,
// Shape.Apply and the store, with the contract's Error on a bad value. Not
// its chaos rules: a fault meant for the app under test must not break the
// developer's own edit, nor take a draw from the seeded sequence; not the
// Prefer header; and not the journal, which records the API's callers.
func (s *Server) updateRecord() httpapi.Handler {
	op := s.shape.Update
	h, err := s.bind(op)
	if err != nil || h == nil {
		// New fails on the same bind when it builds the API's routes.
		return func(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
			httpapi.WriteError(w, r, http.StatusInternalServerError, httpapi.CodeInternal, fmt.Sprintf("the update cannot be served: %v", err))
		}
	}
	quiet := *s.process
	quiet.chaos = newChaos(s.contract, s.maxDelay) // no rules
	calm := *s
	calm.process = &quiet
	update := calm.operation(op, h)
	return func(w http.ResponseWriter, r *http.Request, in *httpapi.Request) {
		session, ok := s.adminSession(w, r, store.DefaultSession)
		if !ok {
			return
		}
		key := r.PathValue("key")
		api, entry := httpapi.WithEntry(r.Clone(r.Context()))
		api.URL = &url.URL{Path: s.contract.BasePath + strings.Replace(op.Path, "{"+s.shape.Key+"}", key, 1)}
		api.RequestURI = api.URL.Path
		api.Header = http.Header{}
		if session != store.DefaultSession { // what the API's sessions step would have read
			entry.Session = session
		}
		if ct := r.Header.Values("Content-Type"); len(ct) > 0 {
			api.Header["Content-Type"] = ct
		}
		api.Body = io.NopCloser(bytes.NewReader(in.Raw))
		api.ContentLength = int64(len(in.Raw))
		api.SetPathValue(s.shape.Key, key)
		update.ServeHTTP(w, api)
	}
}
