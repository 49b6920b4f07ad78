package conformance

import (
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// KeyVar is the environment variable the API key is read from, and what
// stands for the key in every output: a curl line replays where it is set.
const KeyVar = "INVENTORY_API_KEY"

// Secrets are the values no output may show: the API key (and every key
// --api-key-command gave since) and the values of --header. A secret
// added later is hidden from then on by the Redactor and by every Writer
// made before. Safe for concurrent use.
type Secrets struct {
	mu      sync.Mutex // guards list and writers, and serialises Add
	list    []exchange.Secret
	writers []*Output
	rd      atomic.Pointer[exchange.Redactor]
}

// NewSecrets returns the secrets ss (the empty ones left out).
func NewSecrets(ss ...exchange.Secret) *Secrets {
	s := &Secrets{}
	for _, sc := range ss {
		if sc.Value != "" {
			s.list = append(s.list, sc)
		}
	}
	s.rd.Store(exchange.NewRedactor(s.list...))
	return s
}

// KeySecret is the API key as a secret, shown as $INVENTORY_API_KEY.
func KeySecret(key string) exchange.Secret { return exchange.Secret{Value: key, Var: KeyVar} }

// HeaderSecret is the value of an extra header as a secret, shown as
// $INVENTORY_HEADER_<NAME>, every character of the name but a letter or
// digit an underscore.
func HeaderSecret(name, value string) exchange.Secret {
	return exchange.Secret{Value: value, Var: "INVENTORY_HEADER_" + strings.ToUpper(notAlnum.ReplaceAllLiteralString(name, "_"))}
}

var notAlnum = regexp.MustCompile(`[^A-Za-z0-9]`)

// KeyRedactor returns the redactor of an API key.
func KeyRedactor(key string) *exchange.Redactor { return exchange.NewRedactor(KeySecret(key)) }

// Redactor returns the redactor of every secret known now; nil (which
// hides no secret of its own) for nil Secrets.
func (s *Secrets) Redactor() *exchange.Redactor {
	if s == nil {
		return nil
	}
	return s.rd.Load()
}

// Add adds a secret: from now on, the Redactor and every Writer hide it.
func (s *Secrets) Add(sc exchange.Secret) {
	if sc.Value == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.list, func(have exchange.Secret) bool { return have.Value == sc.Value }) {
		return
	}
	s.list = append(s.list, sc)
	rd := exchange.NewRedactor(s.list...)
	s.rd.Store(rd)
	for _, w := range s.writers {
		w.use(rd)
	}
}

// Writer returns a writer to w that hides every secret, those added later
// included. Call Flush when done.
func (s *Secrets) Writer(w io.Writer) *Output {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := &Output{w: w, cur: s.Redactor().Writer(w)}
	s.writers = append(s.writers, o)
	return o
}

// An Output writes through the redactor of the secrets known at the
// time.
type Output struct {
	mu  sync.Mutex // guards cur and serialises writes
	w   io.Writer
	cur *exchange.RedactingWriter
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cur.Write(p)
}

// Flush writes out what is held back (the start of what might be a
// secret).
func (o *Output) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cur.Flush()
}

// use switches to rd: what is held back goes out first, as the old
// redactor hid it (a secret added now cannot have been written before).
func (o *Output) use(rd *exchange.Redactor) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.cur.Flush()
	o.cur = rd.Writer(o.w)
}
