package httpapi

import (
	"log/slog"
	"sync"

	"github.com/petstore/inventory-kit/spec/exchange"
)

// OriginRefusals logs the browser origins a server refuses, each once: the
// browser tells the page only "Failed to fetch", so the server's log is
// where the person who started it learns which origin to allow. At most
// maxRefusedOrigins are remembered (a page can send any Origin); past
// them one line says that the rest go unlogged.
type OriginRefusals struct {
	logger *slog.Logger
	rd     *exchange.Redactor

	mu   sync.Mutex // guards seen and full
	seen map[string]bool
	full bool
}

// maxRefusedOrigins bounds the origins OriginRefusals remembers.
const maxRefusedOrigins = 64

// NewOriginRefusals returns an OriginRefusals logging to logger, with the
// keys rd knows hidden.
func NewOriginRefusals(logger *slog.Logger, rd *exchange.Redactor) *OriginRefusals {
	return &OriginRefusals{logger: logger, rd: rd, seen: map[string]bool{}}
}

// Refused logs, the first time origin is refused for what (such as "the
// admin API"), that it was, and the flag that allows it.
func (o *OriginRefusals) Refused(origin, what, flag string) {
	if o == nil || origin == "" {
		return
	}
	key := what + " " + origin
	o.mu.Lock()
	quiet, last := o.seen[key] || o.full, len(o.seen) == maxRefusedOrigins
	switch {
	case quiet:
	case last:
		o.full = true
	default:
		o.seen[key] = true
	}
	o.mu.Unlock()
	switch {
	case quiet:
	case last:
		o.logger.Warn("CORS: more origins refused; they are not logged", "logged", maxRefusedOrigins)
	default:
		o.logger.Warn("CORS: refused a browser page's request; the page sees only a failed fetch",
			"origin", shown(o.rd, origin), "to", what, "hint", "allow it with "+flag+" "+shown(o.rd, origin))
	}
}
