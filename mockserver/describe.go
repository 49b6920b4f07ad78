package mockserver

import (
	"github.com/petstore/inventory-kit/mockserver/httpapi"

	"encoding/json"
	"net/http"
	"strconv"
)

// A contractInfo is the answer of GET /__admin/contract: what the loaded
// contract says the dashboard needs to know, so that the page types in no
// field, status or example of its own.
type contractInfo struct {
	Title       string          `json:"title"`
	Version     string          `json:"version"`
	BasePath    string          `json:"basePath"`
	Record      recordInfo      `json:"record"`
	Operations  []operationInfo `json:"operations"`
	Faults      []string        `json:"faults"`
	JournalSize int             `json:"journalSize"` // requests kept per session; 0: the journal is off
}

// A recordInfo describes the record schema: the columns of the
// dashboard's table.
type recordInfo struct {
	Name   string      `json:"name"`
	Key    string      `json:"key"`
	Fields []fieldInfo `json:"fields"`
}

// A fieldInfo describes one property of the record schema.
type fieldInfo struct {
	Name        string   `json:"name"`
	Type        string   `json:"type,omitempty"`
	Enum        []string `json:"enum,omitempty"`
	Key         bool     `json:"key,omitempty"`
	Writable    bool     `json:"writable,omitempty"` // the update's body sets it
	Description string   `json:"description,omitempty"`
}

// An operationInfo describes one operation of the contract, with what a
// chaos rule can force it to answer.
type operationInfo struct {
	Name     string `json:"name"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	Statuses []int  `json:"statuses"`
	// Documents is, of the statuses a fault can send (500 and 503), those
	// the contract documents for the operation, by code, range or default.
	Documents  []int         `json:"documents"`
	Examples   []exampleInfo `json:"examples"`
	Deprecated bool          `json:"deprecated,omitempty"`
	Stability  string        `json:"stability,omitempty"`
}

// An exampleInfo is a named example and the status it is answered with.
type exampleInfo struct {
	Name   string `json:"name"`
	Status int    `json:"status"`
}

// info returns the contract's title and version; "" where it gives none.
func (s *Server) info() (title, version string) {
	if m := s.contract.Model; m != nil && m.Info != nil {
		return m.Info.Title, m.Info.Version
	}
	return "", ""
}

// describeContract returns the handler of GET /__admin/contract. The
// answer never changes, so it is encoded once.
func (s *Server) describeContract() httpapi.Handler {
	info := contractInfo{
		BasePath:    s.contract.BasePath,
		Record:      recordInfo{Name: s.shape.Schema.Name, Key: s.shape.Key, Fields: []fieldInfo{}},
		Operations:  []operationInfo{},
		Faults:      faults,
		JournalSize: s.journal.perSession,
	}
	info.Title, info.Version = s.info()
	for _, name := range s.shape.Fields {
		f := fieldInfo{Name: name, Key: name == s.shape.Key, Writable: s.writable[name] && name != s.shape.Key}
		if ps := s.shape.Schema.Property(name); ps != nil {
			f.Type, f.Enum, f.Description = ps.Type(), enumOf(ps), ps.Model.Description
		}
		info.Record.Fields = append(info.Record.Fields, f)
	}
	for _, op := range s.contract.Operations {
		o := operationInfo{Name: op.Name(), Method: op.Method, Path: op.Path, Statuses: append([]int{}, op.Statuses...),
			Documents: []int{}, Examples: []exampleInfo{}, Deprecated: op.Deprecated, Stability: op.Stability}
		for _, status := range []int{http.StatusInternalServerError, http.StatusServiceUnavailable} {
			if op.Response(status) != nil {
				o.Documents = append(o.Documents, status)
			}
		}
		for _, r := range op.Responses {
			status, err := strconv.Atoi(r.Code)
			if err != nil {
				continue
			}
			for _, ex := range r.Examples {
				o.Examples = append(o.Examples, exampleInfo{Name: ex.Name, Status: status})
			}
		}
		info.Operations = append(info.Operations, o)
	}
	body, err := json.Marshal(info)
	body = append(body, '\n')
	return func(w http.ResponseWriter, r *http.Request, _ *httpapi.Request) {
		if err != nil {
			httpapi.WriteError(w, r, http.StatusInternalServerError, httpapi.CodeInternal, "encoding the contract's description: "+err.Error())
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, body)
	}
}
