package httpapi

import (
	"github.com/petstore/inventory-kit/spec/exchange"

	"crypto/subtle"
	"hash/maphash"
	"net/http"
	"strings"
)

// DevKey is the API key the kit's servers accept when given none. It is
// published in the README.md files: it protects nothing.
const DevKey = "inventory-dev-key"

// A Keyring holds the accepted keys and their hashes under a seed made
// when it is made. Accepts hashes a token once and compares the hash with
// every key's, each time all of them, in constant time; only a key whose
// hash the token shares (the key itself, or one chance in 2^64) is then
// compared byte for byte, in constant time too. What the comparison takes
// depends on the token, never on a key's bytes. (A SHA-256 digest per
// request did the same at twenty times the cost: 13% of a list's work.)
type Keyring struct {
	seed maphash.Seed
	sums []uint64
	keys [][]byte
}

// NewKeyring returns a Keyring of keys, the empty ones left out.
func NewKeyring(keys []string) Keyring {
	k := Keyring{seed: maphash.MakeSeed()}
	for _, key := range keys {
		if key != "" {
			k.sums = append(k.sums, maphash.String(k.seed, key))
			k.keys = append(k.keys, []byte(key))
		}
	}
	return k
}

// Accepts reports whether token is one of the keys.
func (k Keyring) Accepts(token string) bool {
	sum := maphash.String(k.seed, token)
	match := 0
	for i, s := range k.sums {
		d := s ^ sum
		same := int(((d | -d) >> 63) ^ 1) // 1 where the hashes are equal, without a branch
		if same == 1 && subtle.ConstantTimeCompare([]byte(token), k.keys[i]) == 1 {
			match = 1
		}
	}
	return match == 1
}

// BearerToken returns the token of the request's one Authorization header,
// or a sentence saying what is wrong with the header. The scheme word is
// case-insensitive.
func BearerToken(r *http.Request) (token, problem string) {
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

// RequireKey answers 401 with an Error body and a Bearer challenge unless
// the request carries a key that keys accepts. It runs before any other
// check, so a request without a valid key learns nothing else.
func RequireKey(keys Keyring) Step {
	return func(w http.ResponseWriter, r *http.Request) *http.Request {
		token, problem := BearerToken(r)
		challenge := noKeyChallenge
		if problem == "" && !keys.Accepts(token) {
			problem, challenge = "API key is not valid", badKeyChallenge
		}
		if problem != "" {
			w.Header()["Www-Authenticate"] = challenge // WWW-Authenticate, as net/http writes its name
			WriteError(w, r, http.StatusUnauthorized, CodeUnauthorized, problem)
			return nil
		}
		return r
	}
}

// The challenges of requireKey's 401, made once: a 401 is half the answers
// of a client hammering with a wrong key.
var (
	noKeyChallenge  = []string{`Bearer realm="inventory"`}
	badKeyChallenge = []string{`Bearer realm="inventory", error="invalid_token"`}
)

// RequireAdminKey answers 401 unless the request carries the admin key.
// A caller who sends a valid API key where the admin key is required is
// told so, rather than that the key is not valid.
func RequireAdminKey(adminKeys, apiKeys Keyring, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, problem := BearerToken(r)
		code := CodeUnauthorized
		challenge := `Bearer realm="inventory-admin"`
		if problem == "" && !adminKeys.Accepts(token) {
			problem, code = "the admin key is not valid", CodeUnauthorized
			if apiKeys.Accepts(token) {
				problem, code = "this endpoint needs the admin key (--admin-key); the key sent is an API key", CodeAdminKeyRequired
			}
			challenge += `, error="invalid_token"`
		}
		if problem != "" {
			w.Header().Set("WWW-Authenticate", challenge)
			WriteError(w, r, http.StatusUnauthorized, code, problem)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Keys are a server's keys: those its API takes, those its admin API
// takes, and the redactor that hides them all.
type Keys struct {
	API, Admin Keyring
	// Redactor shows each API key as $INVENTORY_API_KEY and the admin key
	// as $INVENTORY_ADMIN_KEY, so that a curl line replays where those are
	// set.
	Redactor *exchange.Redactor
}

// NewKeys returns the keys of a server given apiKeys (none: DevKey) and
// adminKey (empty: the admin API takes the API keys).
func NewKeys(apiKeys []string, adminKey string) Keys {
	if len(apiKeys) == 0 {
		apiKeys = []string{DevKey}
	}
	k := Keys{API: NewKeyring(apiKeys)}
	k.Admin = k.API
	if adminKey != "" {
		k.Admin = NewKeyring([]string{adminKey})
	}
	secrets := []exchange.Secret{{Value: adminKey, Var: "INVENTORY_ADMIN_KEY"}}
	for _, key := range apiKeys {
		secrets = append(secrets, exchange.Secret{Value: key, Var: exchange.APIKeyVar})
	}
	k.Redactor = exchange.NewRedactor(secrets...)
	return k
}
