package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/petstore/inventory-kit/mockserver/store"
)

// The tools' inputs. Their JSON names are the admin API's; the SDK derives
// each tool's input schema from them and refuses, as a tool error naming
// the field, an argument of the wrong type or one no field has.

type noInput struct{}

// controlInput names the session whose own chaos rules or rate limit a
// tool reads or clears.
type controlInput struct {
	Session string `json:"session,omitempty" jsonschema:"the session whose own rules these are (X-Mock-Session); absent: the rules of every session without rules of its own"`
}

type sessionInput struct {
	Session string `json:"session,omitempty" jsonschema:"the session, as clients name it in the X-Mock-Session header (1 to 64 letters, digits, '.', '_' or '-'); absent: default"`
}

type recordsInput struct {
	Session string   `json:"session,omitempty" jsonschema:"the session (X-Mock-Session); absent: default"`
	Offset  int      `json:"offset,omitempty" jsonschema:"records to skip; absent: 0"`
	Limit   int      `json:"limit,omitempty" jsonschema:"at most this many records, 1 to 1000; absent: 50"`
	Sort    string   `json:"sort,omitempty" jsonschema:"a field of the record schema to sort by; absent: the key field"`
	Order   string   `json:"order,omitempty" jsonschema:"asc or desc; absent: asc"`
	Filter  []string `json:"filter,omitempty" jsonschema:"FIELD:VALUE filters, such as status:sold; a record passes when it matches every one (numbers compare as numbers)"`
}

type recordInput struct {
	Session string `json:"session,omitempty" jsonschema:"the session (X-Mock-Session); absent: default"`
	Key     int64  `json:"key" jsonschema:"the record's key, the value of the record schema's key field (describe_contract names it), such as a petId"`
}

type setRecordInput struct {
	Session string         `json:"session,omitempty" jsonschema:"the session (X-Mock-Session); absent: default"`
	Key     int64          `json:"key" jsonschema:"the record's key, such as a petId"`
	Fields  map[string]any `json:"fields" jsonschema:"the contract's update body, such as {\"quantity\": 0}: it goes through the contract's own update (its validation, record rules and store), so a value the contract refuses is an error with the contract's message; describe_contract lists the writable fields"`
}

type chaosInput struct {
	Session string      `json:"session,omitempty" jsonschema:"the session whose own rules these are (X-Mock-Session); absent: the rules of every session without rules of its own"`
	Seed    int64       `json:"seed,omitempty" jsonschema:"seed of the random draws (latency ranges, probabilities); absent or 0: the seed in force is kept and the draws start again from it"`
	Rules   []chaosRule `json:"rules" jsonschema:"the rules, replacing those in force; [] removes them all"`
}

type chaosRule struct {
	Operation   string   `json:"operation,omitempty" jsonschema:"the operationId (or METHOD /path) the rule applies to; absent: every operation"`
	Latency     string   `json:"latency,omitempty" jsonschema:"a fixed delay such as 200ms, or a uniform range such as 50ms-1s"`
	Fault       string   `json:"fault,omitempty" jsonschema:"status (answer Status with an Error body), reset (reset the connection), empty (close it without an answer), truncate (half the body, then close), slow (the body in 20 pieces, one every 100 ms)"`
	Status      int      `json:"status,omitempty" jsonschema:"the status of a status fault, 400 to 599"`
	Probability *float64 `json:"probability,omitempty" jsonschema:"the chance, 0 to 1, that a request gets the fault or the example; absent: 1"`
	Example     string   `json:"example,omitempty" jsonschema:"answer this named example of the operation's responses (describe_contract lists them) instead of serving the request; needs operation"`
}

type latencyInput struct {
	Session   string `json:"session,omitempty" jsonschema:"the session whose own rules these are (X-Mock-Session); absent: the rules of every session without rules of its own"`
	Operation string `json:"operation,omitempty" jsonschema:"the operationId (or METHOD /path); absent: every operation"`
	Latency   string `json:"latency" jsonschema:"a fixed delay such as 200ms, or a uniform range such as 50ms-1s; empty removes the latency of that operation"`
}

type rateLimitInput struct {
	Session string `json:"session,omitempty" jsonschema:"the session whose own rate limit this is (X-Mock-Session); absent: the limit of every session without one of its own"`
	Rate    string `json:"rate,omitempty" jsonschema:"N/s or N/m, such as 10/s or 600/m: the requests each API key and session may send; absent: no limit"`
	Burst   int    `json:"burst,omitempty" jsonschema:"the most requests sent at once after being idle; absent: N of the rate, rounded up"`
}

// chaosBody and rateLimitBody are what the admin API reads: the tool's
// input without its session, which goes in the query.
type chaosBody struct {
	Seed  int64       `json:"seed,omitempty"`
	Rules []chaosRule `json:"rules"`
}

type rateLimitBody struct {
	Rate  string `json:"rate,omitempty"`
	Burst int    `json:"burst,omitempty"`
}

type requestsInput struct {
	Session   string `json:"session,omitempty" jsonschema:"only this session's requests"`
	Operation string `json:"operation,omitempty" jsonschema:"only requests of this operation: its operationId, or METHOD /path"`
	Status    int    `json:"status,omitempty" jsonschema:"only answers with this status"`
	Since     string `json:"since,omitempty" jsonschema:"only requests after this RFC 3339 time, or journaled after the request with this id"`
	Limit     int    `json:"limit,omitempty" jsonschema:"at most this many, 1 to 10000; absent: 100"`
}

// a tool's output: what the admin API answered, in its own shape.
type output = any

// result is a tool's answer: out, or err.
func result(out output, err error) (*sdk.CallToolResult, output, error) { return nil, out, err }

func readOnly(title string) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
}

func changes(title string, destructive, idempotent bool) *sdk.ToolAnnotations {
	return &sdk.ToolAnnotations{Title: title, DestructiveHint: &destructive, IdempotentHint: idempotent, OpenWorldHint: new(false)}
}

// addTools adds every tool to s.
func addTools(s *sdk.Server, a *admin) {
	sdk.AddTool(s, &sdk.Tool{Name: "describe_contract", Annotations: readOnly("Describe the contract"),
		Description: "The contract the mock serves: its title and version, the record schema (fields, types, enums, the key field, which fields the update sets), every operation with its documented statuses, named examples, deprecated or experimental label, what a chaos rule can force it to answer, and where the contract is silent, what the mock chooses."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ noInput) (*sdk.CallToolResult, output, error) {
			return result(a.describe(ctx))
		})

	sdk.AddTool(s, &sdk.Tool{Name: "list_sessions", Annotations: readOnly("List sessions"),
		Description: "The sessions that have state (the default first): name, when created, last used, and how many writes."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ noInput) (*sdk.CallToolResult, output, error) {
			b, err := a.call(ctx, http.MethodGet, "/sessions", nil, nil)
			return nil, wrap("sessions", b), err
		})
	sdk.AddTool(s, &sdk.Tool{Name: "reset_session", Annotations: changes("Reset a session", true, true),
		Description: "Put a session's records back to the fixtures: every write made in it is undone."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in sessionInput) (*sdk.CallToolResult, output, error) {
			if _, err := a.call(ctx, http.MethodPost, "/reset", sessionQuery(in.Session), nil); err != nil {
				return nil, nil, err
			}
			return nil, map[string]any{"session": cmp.Or(in.Session, store.DefaultSession), "reset": true}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "drop_session", Annotations: changes("Drop a session", true, true),
		Description: "Forget a session and its journal; its next use starts from the fixtures. The default session is reset instead."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in sessionInput) (*sdk.CallToolResult, output, error) {
			name := cmp.Or(in.Session, store.DefaultSession)
			if _, err := a.call(ctx, http.MethodDelete, "/sessions/"+url.PathEscape(name), nil, nil); err != nil {
				return nil, nil, err
			}
			return nil, map[string]any{"session": name, "dropped": true}, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "list_records", Annotations: readOnly("List records"),
		Description: "One page of a session's records, as the store holds them, sorted and filtered by any field of the record schema: {total, offset, limit, records}."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in recordsInput) (*sdk.CallToolResult, output, error) {
			q := sessionQuery(in.Session)
			setInt(q, "offset", in.Offset)
			setInt(q, "limit", in.Limit)
			setString(q, "sort", in.Sort)
			setString(q, "order", in.Order)
			for _, f := range in.Filter {
				q.Add("filter", f)
			}
			return result(a.call(ctx, http.MethodGet, "/records", q, nil))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "get_record", Annotations: readOnly("Get a record"),
		Description: "One record of a session by its key, as the contract's list answers it."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in recordInput) (*sdk.CallToolResult, output, error) {
			return result(a.record(ctx, in.Session, in.Key))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "set_record", Annotations: changes("Set a record's fields", false, true),
		Description: "Write fields of one record of a session through the contract's own update operation (its validation, record rules and store, but no chaos rule and no journal entry): the record as written, or the contract's Error message."},
		func(ctx context.Context, req *sdk.CallToolRequest, in setRecordInput) (*sdk.CallToolResult, output, error) {
			fields := arguments(req)["fields"] // as sent: the SDK reads numbers as float64
			if in.Fields == nil || fields == nil {
				return nil, nil, fmt.Errorf("fields: give the update body, such as {\"quantity\": 0}")
			}
			return result(a.call(ctx, http.MethodPatch, "/records/"+strconv.FormatInt(in.Key, 10), sessionQuery(in.Session), fields))
		})

	sdk.AddTool(s, &sdk.Tool{Name: "get_chaos", Annotations: readOnly("Get latency and faults"),
		Description: "The latency, fault and forced-example rules in force, and the seed of their draws. With a session: the rules that session's requests get, its own or else the global ones (scope says which)."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in controlInput) (*sdk.CallToolResult, output, error) {
			return result(a.call(ctx, http.MethodGet, "/chaos", sessionQuery(in.Session), nil))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "set_chaos", Annotations: changes("Set latency and faults", true, true),
		Description: "Replace the latency, fault and forced-example rules, for every operation or for one (a rule naming the operation wins). Without a session they apply to every session that has no rules of its own; with one, only to that session's requests. Such as {\"rules\":[{\"operation\":\"updateInventory\",\"fault\":\"status\",\"status\":503}]}. A rule the mock cannot apply is an error and changes nothing. Answers the rules now in force."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in chaosInput) (*sdk.CallToolResult, output, error) {
			if in.Rules == nil {
				in.Rules = []chaosRule{}
			}
			return result(a.call(ctx, http.MethodPut, "/chaos", sessionQuery(in.Session), chaosBody{Seed: in.Seed, Rules: in.Rules}))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "set_latency", Annotations: changes("Set latency", true, true),
		Description: "Set the latency of one operation, or of every one, keeping the other rules: a fault or an example of the same operation keeps its place. An empty latency removes it. With a session, that session's own rules change (starting from the global ones when it has none). Answers the rules now in force."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in latencyInput) (*sdk.CallToolResult, output, error) {
			return result(a.setLatency(ctx, in))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "clear_chaos", Annotations: changes("Clear latency and faults", true, true),
		Description: "Remove every global latency, fault and forced-example rule; with a session, that session's own rules, so it follows the global ones again. Answers the rules now in force."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in controlInput) (*sdk.CallToolResult, output, error) {
			return a.clearControl(ctx, "/chaos", in.Session)
		})

	sdk.AddTool(s, &sdk.Tool{Name: "get_rate_limit", Annotations: readOnly("Get the rate limit"),
		Description: "The rate limit in force, a token bucket per API key and session; no rate when there is none. With a session: the limit its requests get, its own or else the global one (scope says which)."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in controlInput) (*sdk.CallToolResult, output, error) {
			return result(a.call(ctx, http.MethodGet, "/rate-limit", sessionQuery(in.Session), nil))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "set_rate_limit", Annotations: changes("Set the rate limit", true, true),
		Description: "Replace the rate limit: past it, a request of the contract is answered 429 with Retry-After. Without a rate, no limit. With a session, only that session's limit. Answers the limit now in force."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in rateLimitInput) (*sdk.CallToolResult, output, error) {
			return result(a.call(ctx, http.MethodPut, "/rate-limit", sessionQuery(in.Session), rateLimitBody{Rate: in.Rate, Burst: in.Burst}))
		})
	sdk.AddTool(s, &sdk.Tool{Name: "clear_rate_limit", Annotations: changes("Lift the rate limit", true, true),
		Description: "Lift the global rate limit; with a session, that session's own limit, so it follows the global one again. Answers the limit now in force."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in controlInput) (*sdk.CallToolResult, output, error) {
			return a.clearControl(ctx, "/rate-limit", in.Session)
		})

	sdk.AddTool(s, &sdk.Tool{Name: "list_requests", Annotations: readOnly("Read the journal"),
		Description: "The request journal, newest first: each request of the contract the mock served, what was sent and what came back (bodies cut to the journal's limit, credentials left out), the forced answer or fault applied, the contract's verdict on the answer with its problems, and a curl line that replays it (the key read from $INVENTORY_API_KEY)."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in requestsInput) (*sdk.CallToolResult, output, error) {
			q := sessionQuery(in.Session)
			setString(q, "operation", in.Operation)
			setInt(q, "status", in.Status)
			setString(q, "since", in.Since)
			setInt(q, "limit", in.Limit)
			b, err := a.call(ctx, http.MethodGet, "/requests", q, nil)
			return nil, wrap("requests", b), err
		})
	sdk.AddTool(s, &sdk.Tool{Name: "clear_requests", Annotations: changes("Clear the journal", true, true),
		Description: "Empty the journal of one session, or of every session when none is given."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in requestsScope) (*sdk.CallToolResult, output, error) {
			if _, err := a.call(ctx, http.MethodDelete, "/requests", sessionQuery(in.Session), nil); err != nil {
				return nil, nil, err
			}
			return nil, map[string]any{"session": in.Session, "cleared": true}, nil
		})

	sdk.AddTool(s, &sdk.Tool{Name: "judge_exchange", Annotations: readOnly("Judge an exchange"),
		Description: "The contract's verdict on one exchange, as the journal and the validating proxy judge them: given the request's method and path (and its body, if any) and the answer's status and body, whether it keeps the contract and every violation: its rule, severity, side (request or response), where (such as $.quantity or header.Content-Type) and what is wrong."},
		func(ctx context.Context, req *sdk.CallToolRequest, in judgeInput) (*sdk.CallToolResult, output, error) {
			return result(a.judgeExchange(in, arguments(req)))
		})
}

type requestsScope struct {
	Session string `json:"session,omitempty" jsonschema:"the session whose journal to empty; absent: every session's"`
}

// arguments returns a tool call's arguments as sent, each member's JSON
// text as it came.
func arguments(req *sdk.CallToolRequest) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(req.Params.Arguments, &m) // the SDK has read them as an object
	return m
}

// clearControl removes the chaos rules or the rate limit at path, the
// global ones or session's own, and answers what is then in force.
func (a *admin) clearControl(ctx context.Context, path, session string) (*sdk.CallToolResult, output, error) {
	q := sessionQuery(session)
	if _, err := a.call(ctx, http.MethodDelete, path, q, nil); err != nil {
		return nil, nil, err
	}
	return result(a.call(ctx, http.MethodGet, path, q, nil))
}

func setString(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}

func setInt(q url.Values, k string, v int) {
	if v != 0 {
		q.Set(k, strconv.Itoa(v))
	}
}

// wrap makes an array the admin API answered a member of an object, as a
// tool's structured result must be: {"name": [...]}.
func wrap(name string, b []byte) output {
	if b == nil {
		return nil
	}
	return map[string]json.RawMessage{name: b}
}
