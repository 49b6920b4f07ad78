package store

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// go-redis writes lines of its own (a connection pool that cannot dial,
// once a second while the server is down) through one logger per process,
// to stderr in Go's log format by default: a line that breaks
// --log-format json. OpenRedis routes them through redisLogs, to the
// logger of the last store opened.
var (
	redisLogs    = &redisLog{every: time.Minute}
	redisLogOnce sync.Once
)

// logRedisTo makes go-redis log to logger, without password.
func logRedisTo(logger *slog.Logger, password string) {
	redisLogOnce.Do(func() { redis.SetLogger(redisLogs) })
	redisLogs.use(logger, password)
}

// A redisLog passes go-redis's lines to a slog logger, at WARN, at most
// one per period (the first at once; the next says how many were left out
// in between), with every password of a store opened replaced by xxxxx.
type redisLog struct {
	every time.Duration

	mu      sync.Mutex // guards the fields below
	logger  *slog.Logger
	secrets []string
	last    time.Time // when a line was last written
	skipped int       // lines left out since
}

// use sends the lines to logger from now on, hiding password.
func (l *redisLog) use(logger *slog.Logger, password string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.logger = logger
	if password != "" && !slices.Contains(l.secrets, password) {
		l.secrets = append(l.secrets, password)
	}
}

// Printf logs one line of go-redis's.
func (l *redisLog) Printf(_ context.Context, format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	l.mu.Lock()
	now := time.Now()
	if l.logger == nil || (!l.last.IsZero() && now.Sub(l.last) < l.every) {
		l.skipped++
		l.mu.Unlock()
		return
	}
	for _, s := range l.secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	logger, skipped := l.logger, l.skipped
	l.last, l.skipped = now, 0
	l.mu.Unlock()
	attrs := []any{"detail", msg}
	if skipped > 0 {
		attrs = append(attrs, "left_out", skipped) // lines since the last one logged
	}
	logger.Warn("redis client", attrs...)
}
