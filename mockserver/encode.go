package mockserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/petstore/inventory-kit/fixtures"
)

// appendItem appends one InventoryItem as JSON. Status values come from the
// contract's enum and need no escaping.
func appendItem(b []byte, it fixtures.Item) []byte {
	b = append(b, `{"petId":`...)
	b = strconv.AppendInt(b, it.PetID, 10)
	b = append(b, `,"quantity":`...)
	b = strconv.AppendInt(b, it.Quantity, 10)
	b = append(b, `,"status":"`...)
	b = append(b, it.Status...)
	return append(b, `"}`...)
}

// appendJSONString appends s as a JSON string. Messages can quote what a
// client sent, so anything that needs escaping goes through encoding/json
// (without its HTML escaping: these bodies are read by programs and people).
func appendJSONString(b []byte, s string) []byte {
	plain := true
	for i := 0; plain && i < len(s); i++ {
		c := s[i]
		plain = c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
