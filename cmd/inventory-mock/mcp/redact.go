package mcp

import (
	"context"
	"encoding/json"
	"errors"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// redacting is the one place every answer of the server passes before it
// is sent: a tool's result (its text and structured content, an error's
// text included, whether the tool or the SDK's check of its arguments made
// it), a resource's contents and a protocol error's message, with every
// configured key replaced as the journal and the reports replace it.
func redacting(rd *exchange.Redactor) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil {
				var wire *jsonrpc.Error
				if errors.As(err, &wire) {
					out := *wire
					out.Message = rd.String(wire.Message)
					if len(wire.Data) > 0 {
						out.Data = redactJSON(rd, wire.Data)
					}
					return res, &out
				}
				return res, errors.New(rd.String(err.Error()))
			}
			switch r := res.(type) {
			case *sdk.CallToolResult:
				redactContent(rd, r.Content)
				switch sc := r.StructuredContent.(type) {
				case json.RawMessage:
					r.StructuredContent = redactJSON(rd, sc)
				case nil:
				default:
					b, err := json.Marshal(sc)
					if err != nil {
						return nil, err
					}
					r.StructuredContent = redactJSON(rd, b)
				}
			case *sdk.ReadResourceResult:
				for _, c := range r.Contents {
					c.Text = rd.String(c.Text)
					c.URI = rd.String(c.URI)
				}
			}
			return res, err
		}
	}
}

// redactContent replaces keys in a result's text content.
func redactContent(rd *exchange.Redactor, cs []sdk.Content) {
	for _, c := range cs {
		if t, ok := c.(*sdk.TextContent); ok {
			t.Text = rd.String(t.Text)
		}
	}
}

// redactJSON returns the JSON document b with keys replaced; where a key
// sits in its structure, the document as a JSON string of its redacted
// text.
func redactJSON(rd *exchange.Redactor, b []byte) json.RawMessage {
	out, ok := rd.JSON(b)
	if ok {
		return out
	}
	s, _ := json.Marshal(rd.String(string(b)))
	return s
}
