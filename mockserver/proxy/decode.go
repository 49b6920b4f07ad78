package proxy

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/petstore/inventory-kit/mockserver/httpapi"
)

// decode makes the captured answer body readable for the checks: a gzip-
// or deflate-encoded body is decoded, within the check limit and the
// proxy's budget, as a HAR file holds it; another coding, or one the
// budget has no room to decode, is named in RespEncoding, and the body is
// not checked. The client gets the body as the backend sent it.
func (ex *pending) decode(limit int) {
	x := &ex.x
	enc := coding(x.RespHeader)
	if enc == "" || x.RespSize > int64(len(x.RespBody)) || len(x.RespBody) == 0 {
		return // nothing to decode, or too large to check anyway
	}
	if enc != "gzip" && enc != "x-gzip" && enc != "deflate" {
		x.RespEncoding = enc
		return
	}
	// The decoded text up to the limit, and the decoder's window.
	if !ex.take(int64(limit) + 1 + 64<<10) {
		x.RespEncoding = fmt.Sprintf("%s, not decoded: the proxy held its bound of %d KiB of bodies for checks at once", enc, ex.budget.size>>10)
		return
	}
	var r io.ReadCloser
	var err error
	if enc == "deflate" {
		r, err = zlib.NewReader(bytes.NewReader(x.RespBody))
	} else {
		r, err = gzip.NewReader(bytes.NewReader(x.RespBody))
	}
	var b []byte
	if err == nil {
		defer r.Close()
		b, err = httpapi.ReadUpTo(r, limit, int64(len(x.RespBody))*4)
	}
	if err != nil {
		x.RespEncoding = enc + " that does not decode (" + err.Error() + ")"
		return
	}
	x.RespBody, x.RespSize = b[:min(len(b), limit)], int64(len(b))
}

// coding returns a message's content coding, lower case, or "" for none.
func coding(h http.Header) string {
	enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	if enc == "identity" {
		return ""
	}
	return enc
}
