package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/petstore/inventory-kit/mockserver/store"
)

// record returns one record of a session by its key: the admin API's
// page of records filtered on the key field.
func (a *admin) record(ctx context.Context, session string, key int64) (output, error) {
	var info struct {
		Record struct {
			Key string `json:"key"`
		} `json:"record"`
	}
	if err := a.get(ctx, "/contract", nil, &info); err != nil {
		return nil, err
	}
	q := sessionQuery(session)
	q.Set("filter", info.Record.Key+":"+strconv.FormatInt(key, 10))
	q.Set("limit", "1")
	var page struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := a.get(ctx, "/records", q, &page); err != nil {
		return nil, err
	}
	if len(page.Records) == 0 {
		return nil, fmt.Errorf("no record with %s %d in session %s", info.Record.Key, key, cmp.Or(session, store.DefaultSession))
	}
	return page.Records[0], nil
}

// A chaos is the admin API's Chaos, as read and put back whole.
type chaos struct {
	Seed  int64            `json:"seed,omitempty"`
	Rules []map[string]any `json:"rules"`
}

// setLatency sets the latency of one operation, or of all, in the rules
// in force: the rule of that operation gets the latency (one is added
// where there is none); an empty latency takes it off, and a rule left
// with nothing is dropped. The seed in force is kept.
func (a *admin) setLatency(ctx context.Context, in latencyInput) (json.RawMessage, error) {
	var cur chaos
	q := sessionQuery(in.Session)
	if err := a.get(ctx, "/chaos", q, &cur); err != nil {
		return nil, err
	}
	rules := []map[string]any{}
	found := false
	for _, r := range cur.Rules {
		if op, _ := r["operation"].(string); op != in.Operation || found {
			rules = append(rules, r)
			continue
		}
		found = true
		if in.Latency == "" {
			delete(r, "latency")
		} else {
			r["latency"] = in.Latency
		}
		if len(r) > 1 || r["operation"] == nil && len(r) > 0 {
			rules = append(rules, r)
		}
	}
	if !found && in.Latency != "" {
		r := map[string]any{"latency": in.Latency}
		if in.Operation != "" {
			r["operation"] = in.Operation
		}
		rules = append(rules, r)
	}
	return a.call(ctx, http.MethodPut, "/chaos", q, chaos{Rules: rules})
}

// sessionQuery is the query naming a session; none for "".
func sessionQuery(name string) url.Values {
	q := url.Values{}
	setString(q, "session", name)
	return q
}
