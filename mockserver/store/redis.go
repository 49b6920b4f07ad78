package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/singleflight"

	"github.com/petstore/inventory-kit/fixtures"
)

// Redis keeps records in a Redis server, shared by every mock process
// that uses the same server, database and key prefix: those processes are
// one mock. Every write is a compare-and-set on the server (a Lua script),
// the merge and validation staying in Go; every read asks for the
// session's version, and gets the records only when it is not the cached
// one. The key layout and what is checked at start: README.md ("redis").
type Redis struct {
	dataset
	client *redis.Client
	where  string // the server's URL without its password, for messages
	prefix string
	fp     string

	// touchEvery is how often at most this process marks a session used
	// on the server when it only reads it.
	touchEvery time.Duration

	// gen counts connections made to the server: a new one may be to a
	// server that restarted, so what was cached before it is dropped.
	gen atomic.Int64

	mu    sync.Mutex // guards local, and the cache and hints of each
	local map[string]*local

	writes *batcher // sends the compare-and-sets of concurrent writes together

	up     atomic.Bool    // the server answered the last check
	loaded atomic.Bool    // this process wrote meta (for tests)
	stop   chan struct{}  // closed by Close, ending the tasks
	tasks  sync.WaitGroup // check and sweep, every so often
	once   sync.Once
}

// A local is what this process keeps of one session; r.mu guards all of
// it but its flight.
type local struct {
	flight
	// What this process last read of the session, valid while gen is
	// Redis.gen: the session's version (0: the fixtures) and its records.
	gen, ver int64
	snap     *snapshot // nil: nothing read
	touched  time.Time // when this process last marked the session used on the server
	// hints are the records this process last saw the server hold: the
	// first guess of a write's compare-and-set. A wrong guess costs a
	// round trip, never a wrong write.
	hints map[int64][]byte
}

// localOf returns the session's local state, making it if it has none;
// past MaxSessions, those of the sessions other than the default are
// forgotten first (reads under way keep their flight). r.mu must be held.
func (r *Redis) localOf(session string) *local {
	l := r.local[session]
	if l == nil {
		if len(r.local) > r.opts.MaxSessions {
			maps.DeleteFunc(r.local, func(name string, _ *local) bool { return name != DefaultSession })
		}
		l = &local{}
		r.local[session] = l
	}
	return l
}

// DefaultRedisPrefix is the prefix of every key the store writes, unless
// the URL's prefix parameter names another.
const DefaultRedisPrefix = "inventory-mock:"

// redisFormat names the layout of the keys; another value in meta stops
// OpenRedis. Format 1 also stored the fixtures, in a hash no process read.
const (
	redisFormatName    = "inventory-mock redis store, format "
	redisFormatVersion = 2
	redisFormat        = redisFormatName + "2"
)

// maxHints bounds the hints kept per session.
const maxHints = 4096

// ParseRedisURL checks a redis:// or rediss:// URL as OpenRedis takes it:
// go-redis's options, plus prefix. It returns the client options, the key
// prefix, and the URL without its password.
func ParseRedisURL(raw string) (*redis.Options, string, string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", "", errors.New("redis store: not a URL: " + redactedParseError(err))
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, "", "", fmt.Errorf("redis store %s: want a redis:// or rediss:// URL", redactedURL(u))
	}
	q := u.Query()
	prefix := DefaultRedisPrefix
	if q.Has("prefix") {
		prefix = q.Get("prefix")
		q.Del("prefix")
		u.RawQuery = q.Encode()
		if prefix == "" {
			return nil, "", "", fmt.Errorf("redis store %s: ?prefix= is empty, which would put the mock's keys among every other key of the database; leave it out for %q, or name one, such as ?prefix=team-a:", redactedURL(u), DefaultRedisPrefix)
		}
	}
	where := redactedURL(u)
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, "", "", fmt.Errorf("redis store %s: %v", where, err)
	}
	return opts, prefix, where, nil
}

// redactedURL returns a Redis URL for messages: its password as xxxxx,
// and its user too where it has no password or an empty one
// (redis://PASSWORD@host and redis://PASSWORD:@host are how many write a
// password alone, and go-redis reads them so); the values of its query parameters as
// xxxxx, except the numbers, durations and switches go-redis reads there.
func redactedURL(u *url.URL) string {
	r := *u
	if r.User != nil {
		if p, _ := r.User.Password(); p != "" {
			r.User = url.UserPassword(r.User.Username(), "xxxxx")
		} else {
			r.User = url.User("xxxxx")
		}
	}
	if r.RawQuery != "" {
		q := r.Query()
		for k, vs := range q {
			if !plainOptions[k] {
				for i := range vs {
					vs[i] = "xxxxx"
				}
			}
		}
		r.RawQuery = q.Encode()
	}
	return r.String()
}

// plainOptions are go-redis's URL options that hold no secret: numbers,
// durations and switches, shown in messages as given.
var plainOptions = map[string]bool{
	"db": true, "protocol": true, "pool_fifo": true, "skip_verify": true, "pool_size": true,
	"dial_timeout": true, "read_timeout": true, "write_timeout": true, "pool_timeout": true,
	"idle_timeout": true, "max_conn_age": true, "conn_max_idle_time": true, "conn_max_lifetime": true,
	"conn_max_lifetime_jitter": true, "min_retry_backoff": true, "max_retry_backoff": true, "max_retries": true,
	"min_idle_conns": true, "max_idle_conns": true, "max_active_conns": true, "max_concurrent_dials": true,
	"pipeline_pool_size": true, "pipeline_read_buffer_size": true, "pipeline_write_buffer_size": true,
}

// redactedParseError is a url.Parse error without the URL, which may hold
// a password.
func redactedParseError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "malformed"
}

// OpenRedis connects to the server at rawURL, writes meta if it
// holds none, and checks that what it holds was made from records and
// Options.Origin. It waits for the server until ctx is done.
func OpenRedis(ctx context.Context, rawURL string, records []fixtures.Record, opts Options) (*Redis, error) {
	ro, prefix, where, err := ParseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	defaults(ro, rawURL)
	r := &Redis{dataset: newDataset(records, opts), where: where, prefix: prefix, local: map[string]*local{},
		stop: make(chan struct{})}
	r.touchEvery = min(time.Second, r.opts.IdleTimeout/10)
	r.fp = r.fingerprint()
	ro.OnConnect = func(context.Context, *redis.Conn) error {
		r.gen.Add(1)
		return nil
	}
	logRedisTo(r.opts.Logger, ro.Password)
	r.client = redis.NewClient(ro)
	if err = r.waitInit(ctx); err == nil {
		err = r.checkSessions(ctx)
	}
	if err != nil {
		r.client.Close()
		return nil, err
	}
	r.up.Store(true)
	r.writes = newBatcher(r.client, compareAndSet)
	// The default session exists from the start, as in every engine: a
	// read marks it used, and so created, on the server.
	if _, err := r.read(ctx, DefaultSession); err != nil {
		r.writes.close()
		r.client.Close()
		return nil, fmt.Errorf("redis store %s: %v", r.where, err)
	}
	r.tasks.Go(func() { every(time.Second, r.stop, r.check) })
	r.tasks.Go(func() { every(r.opts.sweepEvery(), r.stop, r.sweep) })
	return r, nil
}

// checkSessions checks the records of every session the server holds
// against Options.Shape: a process starting on the server refuses what it
// could not serve.
func (r *Redis) checkSessions(ctx context.Context) error {
	names, err := r.client.ZRange(ctx, r.key("sessions"), 0, -1).Result()
	if err != nil {
		return r.startError(err)
	}
	for chunk := range slices.Chunk(names, 100) {
		pipe := r.client.Pipeline()
		cmds := make([]*redis.MapStringStringCmd, len(chunk))
		for i, name := range chunk {
			cmds[i] = pipe.HGetAll(ctx, r.sessionKey(name))
		}
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return r.startError(err)
		}
		for i, name := range chunk {
			if _, err := r.build(name, cmds[i].Val(), nil); err != nil {
				return fmt.Errorf("redis store %s (prefix %q): %v; nothing is served from it: delete the key %s, or use another database or prefix", r.where, r.prefix, err, r.sessionKey(name))
			}
		}
	}
	return nil
}

// startError explains an error of the server at start-up, naming it.
func (r *Redis) startError(err error) error {
	if msg := refusal(err); msg != "" {
		return fmt.Errorf("redis store %s: %s", r.where, msg)
	}
	return fmt.Errorf("%w: redis store %s: %v", ErrUnavailable, r.where, err)
}

// defaults sets the client options the URL does not: short timeouts, so
// that a server that is down turns into a 503 quickly, and a pool as large
// as the concurrency a mock sees. Retries are off whatever the URL says.
func defaults(o *redis.Options, raw string) {
	u, _ := url.Parse(raw)
	q := u.Query()
	set := func(name string, v *time.Duration, d time.Duration) {
		if !q.Has(name) {
			*v = d
		}
	}
	set("dial_timeout", &o.DialTimeout, time.Second)
	set("read_timeout", &o.ReadTimeout, 2*time.Second)
	set("write_timeout", &o.WriteTimeout, 2*time.Second)
	set("pool_timeout", &o.PoolTimeout, 3*time.Second)
	if !q.Has("pool_size") {
		o.PoolSize = 128
	}
	// Never resend a command whose answer was lost: a compare-and-set that
	// was applied would come back as a conflict with its own write, and
	// the change would be applied twice. A lost answer is a 503 instead:
	// the write may or may not have been made, as with any lost answer.
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.DisableIdentity = true
}

// waitInit runs init until it succeeds, fails for a reason waiting cannot
// fix (such as a wrong password), or ctx is done.
func (r *Redis) waitInit(ctx context.Context) error {
	logged := false
	for {
		err := r.init(ctx)
		if msg := refusal(err); msg != "" {
			return fmt.Errorf("redis store %s: %s", r.where, msg)
		}
		if err == nil || !errors.Is(err, ErrUnavailable) {
			return err
		}
		if !logged {
			r.opts.Logger.Warn("redis store: waiting for the server", "redis", r.where, "error", err)
			logged = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis store %s: no answer before the start-up deadline: %v", r.where, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// init writes meta if the server holds none, or checks it. One script
// does either: of processes starting together on an empty server, one
// writes it and the others check what it wrote.
func (r *Redis) init(ctx context.Context) error {
	host, _ := os.Hostname()
	res, err := initMeta.Run(ctx, r.client, []string{r.key("meta"), r.key("clock")},
		redisFormat, r.fp, len(r.ids), time.Now().UTC().Format(time.RFC3339), fmt.Sprintf("%s (pid %d)", host, os.Getpid())).Result()
	if err != nil {
		return r.unavailable(err)
	}
	meta, err := pairs(res)
	if err != nil {
		return r.unavailable(err)
	}
	if len(meta) > 0 {
		return r.checkMeta(meta)
	}
	r.loaded.Store(true)
	r.opts.Logger.Info("redis store: a new state on the server, starting from the fixtures", "redis", r.where, "prefix", r.prefix, "records", len(r.ids))
	return nil
}

// refusal explains an answer of the server that waiting cannot change: it
// refused the credentials, or the user may not use the keys or commands
// the store needs. "" for any other error.
func refusal(err error) string {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return ""
	}
	msg := re.Error()
	switch {
	case strings.HasPrefix(msg, "WRONGPASS"), strings.HasPrefix(msg, "ERR AUTH"), strings.HasPrefix(msg, "ERR invalid password"):
		return "authentication refused: the server does not accept the user and password of the URL (" + msg + "); check them, as in redis://:PASSWORD@HOST:PORT/DB"
	case strings.HasPrefix(msg, "NOAUTH"):
		return "authentication required: the server wants a password, and the URL gives none (" + msg + "); give it as in redis://:PASSWORD@HOST:PORT/DB"
	case strings.HasPrefix(msg, "NOPERM"):
		return "permission denied: the URL's user may not run the commands or use the keys the mock needs (" + msg + "); grant it the keys of the prefix (~PREFIX*) and the commands EVALSHA, EVAL, HGETALL, HMGET, ZRANGE, DEL, ZREM, EXISTS, or use another user"
	}
	return ""
}

// checkMeta refuses a server that holds the state of another format or
// other fixtures.
func (r *Redis) checkMeta(meta map[string]string) error {
	if got := meta["format"]; got != redisFormat {
		v, err := strconv.Atoi(strings.TrimPrefix(got, redisFormatName))
		switch {
		case !strings.HasPrefix(got, redisFormatName) || err != nil:
			return fmt.Errorf("redis store %s (prefix %q): holds a meta key of format %q, which no inventory-mock writes; use another database or prefix, or delete the keys %s*", r.where, r.prefix, got, r.prefix)
		case v < redisFormatVersion:
			return fmt.Errorf("redis store %s (prefix %q): holds keys of an older version of inventory-mock (format %d; this one reads format %d only); use another database or prefix, or delete the keys %s*", r.where, r.prefix, v, redisFormatVersion, r.prefix)
		}
		return fmt.Errorf("redis store %s (prefix %q): holds keys of a newer version of inventory-mock (format %d; this one reads format %d only); run that version, or use another database or prefix", r.where, r.prefix, v, redisFormatVersion)
	}
	if meta["fingerprint"] != r.fp {
		return fmt.Errorf("redis store %s (prefix %q): holds the state of other fixtures or another contract (fingerprint %.12s, loaded %s by %s; these are %.12s); start every replica with the same --spec, --fixtures and --generate, or use another database or prefix (?prefix=NAME) for these, or delete the keys %s*",
			r.where, r.prefix, meta["fingerprint"], meta["loaded"], meta["by"], r.fp, r.prefix)
	}
	return nil
}

func (r *Redis) key(name string) string { return r.prefix + name }

func (r *Redis) sessionKey(session string) string { return r.prefix + "s:" + session }

// sessionArgs returns the arguments of a script that calls touch: args,
// the session's name, then the idle time, the most sessions and the prefix
// of session hashes, then more.
func (r *Redis) sessionArgs(args []any, session string, more ...any) []any {
	out := make([]any, 0, len(args)+4+len(more))
	out = append(append(out, args...), session, r.opts.IdleTimeout.Milliseconds(), r.opts.MaxSessions, r.prefix+"s:")
	return append(out, more...)
}

// unavailable wraps an error of the client or the server as
// ErrUnavailable; nil stays nil. Its message, which the mock sends in 503 answers and in
// /healthz (which takes no key), does not name the server: the log does.
func (r *Redis) unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return &serverError{err}
}

// A serverError is ErrUnavailable with the error that caused it.
type serverError struct{ err error }

func (e *serverError) Error() string {
	if msg := refusal(e.err); msg != "" {
		return ErrUnavailable.Error() + ": redis store: " + msg
	}
	return ErrUnavailable.Error() + ": redis store: " + reason(e.err)
}

func (e *serverError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// reason describes an error of the client without the server's address:
// "dial tcp: connect: connection refused".
func reason(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		s := op.Op
		if op.Net != "" {
			s += " " + op.Net
		}
		if op.Err != nil {
			s += ": " + op.Err.Error()
		}
		return s
	}
	return err.Error()
}

// read returns the session's state on the server. Reads of one session
// that arrive while a fetch is under way share the next fetch, which
// starts after they arrived and so sees every write acknowledged before
// they did: under load, one round trip answers many requests.
func (r *Redis) read(ctx context.Context, session string) (*snapshot, error) {
	r.mu.Lock()
	f := &r.localOf(session).flight
	r.mu.Unlock()
	// The fetch to join is the next to begin: one that began before this
	// read arrived may miss a write acknowledged before it.
	next := strconv.FormatUint(f.begun.Load()+1, 10)
	ch := f.fetches.DoChan(next, func() (any, error) {
		f.run.Lock()
		defer f.run.Unlock()
		f.begun.Add(1)
		// A context of its own: it serves reads other than the one that began it.
		ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
		defer cancel()
		return r.fetch(ctx, session)
	})
	select {
	case res := <-ch:
		snap, _ := res.Val.(*snapshot) // nil with an error
		return snap, res.Err
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
	}
}

// A flight is the fetches of one session's state: at most one under way
// and one waiting for it to end, which every read arriving meanwhile joins.
type flight struct {
	fetches singleflight.Group // keyed by the fetch's number
	run     sync.Mutex         // held by the fetch under way
	begun   atomic.Uint64      // the number of fetches begun
}

// fetchTimeout bounds one fetch, beyond the client's own timeouts.
const fetchTimeout = 5 * time.Second

// fetch reads the session's state from the server, taking the records
// from the cache when its version is the server's.
func (r *Redis) fetch(ctx context.Context, session string) (*snapshot, error) {
	prev, ver, touch := r.cached(session)
	gen := r.gen.Load()
	args := r.sessionArgs([]any{ver, touch}, session)
	res, err := readSession.Run(ctx, r.client, []string{r.sessionKey(session), r.key("sessions")}, args...).Slice()
	if err != nil {
		return nil, r.unavailable(err)
	}
	v, err := toInt(res[0])
	if err != nil {
		return nil, r.unavailable(err)
	}
	if prev != nil && v == ver && len(res) == 1 {
		r.remember(session, gen, v, nil, touch)
		return prev, nil
	}
	snap := r.seed
	if len(res) > 1 {
		fields, err := pairs(res[1])
		if err != nil {
			return nil, r.unavailable(err)
		}
		if snap, err = r.build(session, fields, prev); err != nil {
			return nil, r.unavailable(err)
		}
	}
	r.remember(session, gen, v, snap, touch)
	return snap, nil
}

// build makes a snapshot of a session's hash (restore checks its
// records).
func (r *Redis) build(session string, fields map[string]string, prev *snapshot) (*snapshot, error) {
	changes := map[int64][]byte{}
	for k, v := range fields {
		if strings.HasPrefix(k, "_") {
			continue
		}
		id, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("session %q holds the field %q, which is not a key", session, k)
		}
		changes[id] = []byte(v)
	}
	return r.restore(session, changes, prev)
}

// pairs reads the reply of HGETALL inside a script: a flat list of names
// and values.
func pairs(v any) (map[string]string, error) {
	list, ok := v.([]any)
	if !ok || len(list)%2 != 0 {
		return nil, fmt.Errorf("unexpected reply %T", v)
	}
	out := make(map[string]string, len(list)/2)
	for i := 0; i < len(list); i += 2 {
		k, ok1 := list[i].(string)
		val, ok2 := list[i+1].(string)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("unexpected reply %T, %T", list[i], list[i+1])
		}
		out[k] = val
	}
	return out, nil
}

// toInt reads an integer reply, sent as an integer or a string.
func toInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("unexpected reply %T", v)
}

// cached returns what this process last read of the session, if it read
// it on the current connection (nil, 0 if not), and whether to mark the
// session used on the server now: it has not for touchEvery.
func (r *Redis) cached(session string) (snap *snapshot, ver int64, touch bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.localOf(session)
	if l.snap == nil || l.gen != r.gen.Load() {
		return nil, 0, true
	}
	return l.snap, l.ver, time.Since(l.touched) >= r.touchEvery
}

// remember keeps what a read begun at gen found, unless a new connection
// was made since: the session's version and records (snap nil: what is
// kept is still the server's), and whether it marked the session used.
func (r *Redis) remember(session string, gen, ver int64, snap *snapshot, touched bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.localOf(session)
	if gen != r.gen.Load() {
		return
	}
	if snap != nil {
		if l.gen != gen {
			l.touched = time.Time{}
		}
		l.gen, l.ver, l.snap = gen, ver, snap
	}
	if touched {
		l.touched = time.Now()
	}
}

// List returns the session's records.
func (r *Redis) List(ctx context.Context, session string) (List, error) {
	snap, err := r.read(ctx, session)
	return List{snap}, err // List{} with an error
}

// Get returns the session's record of id.
func (r *Redis) Get(ctx context.Context, session string, id int64) (fixtures.Record, error) {
	pos, ok := r.find(id)
	if !ok {
		return fixtures.Record{}, ErrNotFound
	}
	snap, err := r.read(ctx, session)
	if err != nil {
		return fixtures.Record{}, err
	}
	return fixtures.Record{ID: id, JSON: snap.record(pos)}, nil
}

// maxAttempts bounds the compare-and-sets of one Update: each that fails
// means another write to the record succeeded.
const maxAttempts = 1000

// Update runs change on the record it guesses is stored, and asks the
// server to write the result if the guess was right; if not, it runs
// change again on the record the server returned.
func (r *Redis) Update(ctx context.Context, session string, id int64, change func(fixtures.Record) (fixtures.Record, error)) (fixtures.Record, error) {
	pos, ok := r.find(id)
	if !ok {
		return fixtures.Record{}, ErrNotFound
	}
	fixture := r.seed.record(pos)
	guess := r.guess(session, id, pos)
	keys := []string{r.sessionKey(session), r.key("sessions"), r.key("clock")}
	idArg := strconv.FormatInt(id, 10)
	_, _, touch := r.cached(session)
	for range maxAttempts {
		rec, err := change(fixtures.Record{ID: id, JSON: guess})
		if err != nil {
			return fixtures.Record{}, err
		}
		gen := r.gen.Load()
		args := r.sessionArgs([]any{idArg, guess, fixture, rec.JSON}, session, touch)
		res, err := r.writes.do(ctx, keys, args)
		if err != nil {
			return fixtures.Record{}, r.unavailable(err)
		}
		if ok, _ := toInt(res[0]); ok == 1 && len(res) == 3 {
			r.wrote(session, gen, id, pos, rec.JSON, res[1], res[2], touch)
			return rec, nil
		}
		cur, ok := res[1].(string)
		if !ok {
			return fixtures.Record{}, r.unavailable(fmt.Errorf("unexpected reply %T", res[1]))
		}
		guess = []byte(cur)
		if err := r.checkStored(session, id, pos, guess, nil); err != nil {
			return fixtures.Record{}, r.unavailable(err)
		}
		r.mu.Lock()
		r.localOf(session).hint(id, guess)
		r.mu.Unlock()
	}
	return fixtures.Record{}, fmt.Errorf("%w: redis store %s: pet %d of session %s changed under %d attempts to write it", ErrUnavailable, r.where, id, session, maxAttempts)
}

// guess returns the record this process last saw of id in the session:
// the last one a write met, else the cached one, else the fixture.
func (r *Redis) guess(session string, id int64, pos int) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.localOf(session)
	if h, ok := l.hints[id]; ok {
		return h
	}
	return cmp.Or(l.snap, r.seed).record(pos)
}

// hint remembers the record of id the server holds. r.mu must be held.
func (l *local) hint(id int64, rec []byte) {
	if l.hints == nil || len(l.hints) >= maxHints {
		l.hints = map[int64][]byte{}
	}
	l.hints[id] = rec
}

// wrote updates the cache after a write: the cached records are the
// server's at the new version if they were at the previous one.
func (r *Redis) wrote(session string, gen, id int64, pos int, rec []byte, newVer, prevVer any, touched bool) {
	v, err1 := toInt(newVer)
	prev, err2 := toInt(prevVer)
	r.mu.Lock()
	defer r.mu.Unlock()
	l := r.localOf(session)
	l.hint(id, rec)
	if l.snap == nil || l.gen != gen || gen != r.gen.Load() {
		return
	}
	if touched {
		l.touched = time.Now()
	}
	if err1 == nil && err2 == nil && l.ver == prev {
		l.ver, l.snap = v, l.snap.with(pos, rec)
	}
}

// Reset puts the session back to the fixtures.
func (r *Redis) Reset(ctx context.Context, session string) error {
	args := r.sessionArgs(nil, session)
	return r.unavailable(resetSession.Run(ctx, r.client, []string{r.sessionKey(session), r.key("sessions")}, args...).Err())
}

// Sessions describes the sessions on the server, the default first, then
// by name.
func (r *Redis) Sessions(ctx context.Context) ([]SessionInfo, error) {
	used, err := r.client.ZRangeWithScores(ctx, r.key("sessions"), 0, -1).Result()
	if err != nil {
		return nil, r.unavailable(err)
	}
	last := map[string]time.Time{DefaultSession: {}}
	for _, z := range used {
		name, _ := z.Member.(string)
		last[name] = time.UnixMilli(int64(z.Score))
	}
	names := slices.SortedFunc(maps.Keys(last), sessionOrder)
	pipe := r.client.Pipeline()
	cmds := make([]*redis.SliceCmd, len(names))
	for i, name := range names {
		cmds[i] = pipe.HMGet(ctx, r.sessionKey(name), "_c", "_w")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, r.unavailable(err)
	}
	out := make([]SessionInfo, 0, len(names))
	for i, name := range names {
		vals := cmds[i].Val()
		info := SessionInfo{Name: name, LastUsed: last[name]}
		if len(vals) == 2 {
			if c, err := toInt(vals[0]); err == nil {
				info.Created = time.UnixMilli(c)
			}
			info.Writes, _ = toInt(vals[1])
		}
		out = append(out, info)
	}
	return out, nil
}

// Drop forgets a session; the default one is reset instead.
func (r *Redis) Drop(ctx context.Context, session string) error {
	if session == DefaultSession {
		return r.Reset(ctx, session)
	}
	pipe := r.client.TxPipeline()
	pipe.Del(ctx, r.sessionKey(session))
	pipe.ZRem(ctx, r.key("sessions"), session)
	_, err := pipe.Exec(ctx)
	return r.unavailable(err)
}

// Health reports whether the server answers and holds the fixtures'
// meta.
func (r *Redis) Health(ctx context.Context) error {
	n, err := r.client.Exists(ctx, r.key("meta")).Result()
	switch {
	case err != nil:
		return r.unavailable(err)
	case n == 0:
		return fmt.Errorf("%w: redis store: the server holds no state of this mock (it lost its data?); starting again from the fixtures", ErrUnavailable)
	}
	return nil
}

// sweep drops the idle sessions from the server's set of sessions.
func (r *Redis) sweep() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	dropIdle.Run(ctx, r.client, []string{r.key("sessions")}, r.opts.IdleTimeout.Milliseconds(), r.prefix+"s:")
}

// check, every second, logs when the server goes away and comes back, and
// writes meta into a server that has lost its data.
func (r *Redis) check() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := r.client.Exists(ctx, r.key("meta")).Result()
	if err == nil && n == 0 {
		r.opts.Logger.Warn("redis store: the server holds no state of this mock (it lost its data); every session starts again from the fixtures", "redis", r.where)
		err = r.init(ctx)
	}
	switch {
	case err != nil && r.up.Swap(false):
		r.opts.Logger.Error("redis store: unavailable; answering 503 until it is back", "redis", r.where, "error", err)
	case err == nil && !r.up.Swap(true):
		r.opts.Logger.Info("redis store: available again", "redis", r.where)
	}
}

// Close stops the tasks and closes the connections.
func (r *Redis) Close() error {
	var err error
	r.once.Do(func() {
		close(r.stop)
		r.tasks.Wait()
		r.writes.close()
		err = r.client.Close()
	})
	return err
}
