package traffic

import (
	"net/http"
	"time"
)

// An Exchange is one request and its answer as observed: by the proxy as
// they pass, or read from a HAR file. Bodies hold at most the check limit;
// Size says how long each really was.
type Exchange struct {
	Time time.Time
	// Request is the request with its URL path under the contract's base
	// path (the proxy and the HAR reader map the backend's base path to
	// it). Its Body is not read: ReqBody holds the body.
	Request *http.Request
	// URL is the address as the client used it, for examples; empty: the
	// Request's.
	URL     string
	ReqBody []byte
	ReqSize int64 // the whole request body's length; more than len(ReqBody): too large to check

	Status     int // 0: no answer
	RespHeader http.Header
	RespBody   []byte
	RespSize   int64 // the whole response body's length; more than len(RespBody): too large to check
	// RespNotRecorded says the body was not kept at all (a HAR entry
	// without content text), so it cannot be checked.
	RespNotRecorded bool
	// ReqEncoding and RespEncoding name a content coding (Content-Encoding)
	// the body is still in because it could not be decoded, such as br:
	// then the body is not checked. Empty: the body is as it was meant.
	ReqEncoding, RespEncoding string
}

// reqTooLarge reports whether the request body was cut to the check limit.
func (x *Exchange) reqTooLarge() bool { return x.ReqSize > int64(len(x.ReqBody)) }

// respTooLarge reports whether the response body was cut to the check limit.
func (x *Exchange) respTooLarge() bool { return x.RespSize > int64(len(x.RespBody)) }

// A Violation is one way an exchange breaks the contract.
type Violation struct {
	Operation string // the operation's name (operationId, or METHOD /path); METHOD path where none matched
	Rule      string // one of the Rule constants
	Where     string // WhereRequest or WhereResponse
	Path      string // where in the message: a JSON path such as $.status or $[3].status, or path.petId, header.Authorization
	Message   string // what was wrong, and what the contract wants
}
