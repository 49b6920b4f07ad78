package mockserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// DevKey is the API key the mock accepts when it is given none. It is
// published in the README: it protects nothing.
const DevKey = "inventory-dev-key"

// A keyring holds the SHA-256 digests of the accepted keys, so every
// comparison is of equal length and takes the same time.
type keyring [][sha256.Size]byte

func newKeyring(keys []string) keyring {
	k := make(keyring, 0, len(keys))
	for _, key := range keys {
		if key != "" {
			k = append(k, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

// accepts compares token with every key in constant time, without stopping
// at the first match.
func (k keyring) accepts(token string) bool {
	sum := sha256.Sum256([]byte(token))
	match := 0
	for i := range k {
		match |= subtle.ConstantTimeCompare(sum[:], k[i][:])
	}
	return match == 1
}

// bearerToken returns the token of the request's one Authorization header,
// or a sentence saying what is wrong with the header. The scheme word is
// case-insensitive.
func bearerToken(r *http.Request) (token, problem string) {
	values := r.Header["Authorization"] // canonical: no look-up of the name's case
	switch {
	case len(values) == 0:
		return "", "missing Authorization header; send Authorization: Bearer <API key>"
	case len(values) > 1:
		return "", "more than one Authorization header"
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", "Authorization scheme must be Bearer"
	}
	if token = strings.TrimSpace(token); token == "" {
		return "", "Authorization header has an empty bearer token"
	}
	return token, ""
}

// requireKey answers 401 with an Error body and a Bearer challenge unless
// the request carries a key that keys accepts. It runs before any other
// check, so a request without a valid key learns nothing else.
func requireKey(keys keyring, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, problem := bearerToken(r)
		challenge := noKeyChallenge
		if problem == "" && !keys.accepts(token) {
			problem, challenge = "API key is not valid", badKeyChallenge
		}
		if problem != "" {
			w.Header()["Www-Authenticate"] = challenge // WWW-Authenticate, as net/http writes its name
			writeError(w, http.StatusUnauthorized, CodeUnauthorized, problem)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// The challenges of requireKey's 401, made once: a 401 is half the answers
// of a client hammering with a wrong key.
var (
	noKeyChallenge  = []string{`Bearer realm="inventory"`}
	badKeyChallenge = []string{`Bearer realm="inventory", error="invalid_token"`}
)

// requireAdminKey answers 401 unless the request carries the admin key.
// A caller who sends a valid API key where the admin key is required is
// told so, rather than that the key is not valid.
func requireAdminKey(adminKeys, apiKeys keyring, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, problem := bearerToken(r)
		code := CodeUnauthorized
		challenge := `Bearer realm="inventory-admin"`
		if problem == "" && !adminKeys.accepts(token) {
			problem, code = "the admin key is not valid", CodeUnauthorized
			if apiKeys.accepts(token) {
				problem, code = "this endpoint needs the admin key (--admin-key); the key sent is an API key", CodeAdminKeyRequired
			}
			challenge += `, error="invalid_token"`
		}
		if problem != "" {
			w.Header().Set("WWW-Authenticate", challenge)
			writeError(w, http.StatusUnauthorized, code, problem)
			return
		}
		next.ServeHTTP(w, r)
	})
}
