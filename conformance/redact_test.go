package conformance

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"
)

func TestRedactingWriterHidesTheKey(t *testing.T) {
	const key = "k3y/s3cr3t+x"
	rd := NewRedactor(key)
	x := Exchange{
		Method: "GET", URL: "https://h/v1/inventory?k=" + key, Header: http.Header{"Authorization": {"Bearer " + key}},
		Status: 200, RespHead: http.Header{"Content-Type": {"application/json; x=\"" + key + "\""}},
		RespBody: []byte(`{"echo":"` + key + `","q":"k3y%2Fs3cr3t%2Bx"}`),
		Err:      errors.New("dial https://h/v1/inventory?k=" + key), key: key,
	}
	var out bytes.Buffer
	w := rd.Writer(&out)
	msg := x.Want("wanted %s", key) + x.Got()
	// Written a byte at a time: a key split across writes is still found.
	for i := range len(msg) {
		if _, err := w.Write([]byte{msg[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), key) || strings.Contains(out.String(), "k3y%2Fs3cr3t%2Bx") {
		t.Errorf("the key appears in:\n%s", out.String())
	}
	if !strings.Contains(out.String(), KeyPlaceholder) {
		t.Errorf("no placeholder in:\n%s", out.String())
	}
	if got := out.Len(); got < len(msg)/2 {
		t.Errorf("wrote %d bytes of %d", got, len(msg))
	}
}
