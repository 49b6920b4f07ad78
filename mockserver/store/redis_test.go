package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/petstore/inventory-kit/fixtures"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// openRedis opens a Redis store on url with records, closed when the test
// ends.
func openRedis(t *testing.T, url string, records []fixtures.Record) *Redis {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := OpenRedis(ctx, url, records, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestRedisLoadsFixturesOnce starts six stores together on an empty
// server: one writes meta (the fingerprint of the fixtures), the others
// wait for it. The fixtures themselves are not stored on the server.
func TestRedisLoadsFixturesOnce(t *testing.T) {
	srv := redistest.Start(t)
	const n = 6
	stores := make([]*Redis, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			r, err := OpenRedis(ctx, srv.URL(0), pets(2000), Options{})
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = r
		}()
	}
	wg.Wait()
	loaded := 0
	for _, r := range stores {
		if r == nil {
			t.FailNow()
		}
		defer r.Close()
		if r.loaded.Load() {
			loaded++
		}
	}
	if loaded != 1 {
		t.Errorf("%d of %d stores loaded the fixtures; want 1", loaded, n)
	}
	ctx := context.Background()
	c := stores[0].client
	if keys := c.Keys(ctx, "*").Val(); fmt.Sprint(sorted(keys)) != "[inventory-mock:clock inventory-mock:meta inventory-mock:s:default inventory-mock:sessions]" {
		t.Errorf("the server holds the keys %v; want clock, meta, sessions and the default session's only", sorted(keys))
	}
	if meta := c.HGetAll(ctx, stores[0].key("meta")).Val(); meta["records"] != "2000" || meta["fingerprint"] != stores[0].fp || meta["format"] != redisFormat {
		t.Errorf("meta = %v; want 2000 records, the fingerprint and the format", meta)
	}
}

// TestRedisDownAndBack kills the server under a store: reads, writes and
// Health fail with ErrUnavailable, quickly, without the password; when the
// server is back, with its append-only file, the store serves again with
// every acknowledged write.
func TestRedisDownAndBack(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t, append(redistest.Durable, "--requirepass", "s3cret")...)
	r := openRedis(t, "redis://:s3cret@"+srv.Addr+"/0", pets(10))
	if _, err := r.Update(ctx, "a", 2, setQuantity(222)); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	start := time.Now()
	for name, op := range map[string]func() error{
		"List":   func() error { _, err := r.List(ctx, "a"); return err },
		"Get":    func() error { _, err := r.Get(ctx, "a", 2); return err },
		"Update": func() error { _, err := r.Update(ctx, "a", 2, setQuantity(1)); return err },
		"Reset":  func() error { return r.Reset(ctx, "b") },
		"Health": func() error { return r.Health(ctx) },
		"Sessions": func() error {
			_, err := r.Sessions(ctx)
			return err
		},
	} {
		err := op()
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s with the server down: error = %v; want ErrUnavailable", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
		// The mock sends it in 503 answers and /healthz, which takes no key.
		if _, port, _ := net.SplitHostPort(srv.Addr); err != nil && strings.Contains(err.Error(), port) {
			t.Errorf("%s: the error names the server: %v", name, err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("six calls with the server down took %v; want a quick 503", d)
	}
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for r.Health(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Health = %v 5s after the server came back", r.Health(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := r.Get(ctx, "a", 2); err != nil || quantity(t, got) != 222 {
		t.Errorf("after the server came back: pet 2 of a = %s, %v; want 222", got.JSON, err)
	}
}

// TestRedisServerLostItsData restarts a server that keeps nothing: the
// store loads the fixtures again, and serves them, not what it had cached.
func TestRedisServerLostItsData(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	r := openRedis(t, srv.URL(0), pets(10))
	r.Update(ctx, DefaultSession, 3, setQuantity(333))
	list(t, r, DefaultSession) // cached, with the write
	srv.Kill()
	srv.Restart()
	deadline := time.Now().Add(5 * time.Second)
	for r.Health(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("Health = %v 5s after the server came back empty", r.Health(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if items := list(t, r, DefaultSession); items[2].Quantity != 30 {
		t.Errorf("after the server lost its data: pet 3 = %v; want the fixture's 30", items[2])
	}
	if meta := r.client.HGetAll(ctx, r.key("meta")).Val(); meta["fingerprint"] != r.fp {
		t.Errorf("meta after the server came back empty = %v; want it written again", meta)
	}
}

// TestRedisRefusesAnotherFormat checks that keys of another format stop
// OpenRedis with a message naming both formats.
func TestRedisRefusesAnotherFormat(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	for db, tt := range []struct{ format, want string }{
		{"inventory-mock redis store, format 1", "holds keys of an older version of inventory-mock (format 1; this one reads format 2 only)"},
		{"inventory-mock redis store, format 3", "holds keys of a newer version of inventory-mock (format 3; this one reads format 2 only)"},
		{"x", `holds a meta key of format "x", which no inventory-mock writes`},
	} {
		cdb := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: db})
		cdb.HSet(context.Background(), DefaultRedisPrefix+"meta", "format", tt.format)
		cdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if _, err := OpenRedis(ctx, srv.URL(db), pets(3), Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("meta of format %q: OpenRedis = %v; want %q", tt.format, err, tt.want)
		}
		cancel()
	}
}

// TestRedisAuthRefused starts stores with credentials the server refuses:
// OpenRedis stops at once, saying what is wrong, where waiting for the
// server would take the whole start-up deadline.
func TestRedisAuthRefused(t *testing.T) {
	srv := redistest.Start(t, append(redistest.NoPersistence, "--requirepass", "right-s3cret")...)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: "right-s3cret"})
	defer admin.Close()
	if err := admin.Do(context.Background(), "ACL", "SETUSER", "narrow", "on", ">narrow-pw", "~other:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ url, want string }{
		{"redis://:wrong-pw@" + srv.Addr + "/0", "authentication refused"},
		{"redis://" + srv.Addr + "/0", "authentication required"},
		{"redis://narrow:narrow-pw@" + srv.Addr + "/0", "permission denied"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		start := time.Now()
		_, err := OpenRedis(ctx, tt.url, pets(3), Options{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("OpenRedis(%s) = %v; want %q", tt.url, err, tt.want)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("OpenRedis(%s) took %v; want a refusal at once, not a wait", tt.url, d)
		}
		if err != nil && (strings.Contains(err.Error(), "wrong-pw") || strings.Contains(err.Error(), "narrow-pw")) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	r := openRedis(t, "redis://:right-s3cret@"+srv.Addr+"/0", pets(3))
	if err := r.Health(context.Background()); err != nil {
		t.Errorf("the right password: Health = %v", err)
	}
}

// TestRedisChecksRecords writes records that are not records of the
// contract's schema into the server behind the stores' backs: a store
// starting on it refuses to start, and a store running on it answers
// ErrUnavailable for that session, never the record.
func TestRedisChecksRecords(t *testing.T) {
	ctx := context.Background()
	shape, records := contractRecords(t)
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer c.Close()
	open := func() (*Redis, error) {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		r, err := OpenRedis(ctx, srv.URL(0), records, Options{Shape: shape})
		if err == nil {
			t.Cleanup(func() { r.Close() })
		}
		return r, err
	}
	r, err := open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Update(ctx, "b", 5, func(fixtures.Record) (fixtures.Record, error) {
		return fixtures.Record{ID: 5, JSON: []byte(`{"petId":5,"quantity":1,"status":"sold"}`)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	list(t, r, "b") // cached
	// Another process writes a bad record, with a new version.
	bad := `{"petId":5,"quantitx":31337,"status":"sold"}`
	v := c.Incr(ctx, r.key("clock")).Val()
	c.HSet(ctx, r.sessionKey("b"), "5", bad, "_v", v)
	for name, op := range map[string]func() error{
		"List":   func() error { _, err := r.List(ctx, "b"); return err },
		"Get":    func() error { _, err := r.Get(ctx, "b", 6); return err },
		"Update": func() error { _, err := r.Update(ctx, "b", 5, setQuantity(2)); return err },
	} {
		err := op()
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `session "b": the record of petId 5 is not a InventoryItem`) {
			t.Errorf("%s of a session holding %s: error = %v; want ErrUnavailable naming the record", name, bad, err)
		}
	}
	if l, err := r.List(ctx, DefaultSession); err != nil || l.Len() != len(records) {
		t.Errorf("the default session: List = %d records, %v; want it served", l.Len(), err)
	}
	// A process starting on the server refuses it.
	if _, err := open(); err == nil || !strings.Contains(err.Error(), `session "b": the record of petId 5 is not a InventoryItem`) || !strings.Contains(err.Error(), "delete the key inventory-mock:s:b") {
		t.Errorf("OpenRedis on a server holding %s = %v; want a refusal naming the session and the record", bad, err)
	}
	// A good record written by another process is served.
	v = c.Incr(ctx, r.key("clock")).Val()
	c.HSet(ctx, r.sessionKey("b"), "5", `{"petId":5,"quantity":77,"status":"sold"}`, "_v", v)
	if got, err := r.Get(ctx, "b", 5); err != nil || string(got.JSON) != `{"petId":5,"quantity":77,"status":"sold"}` {
		t.Errorf("after a good write by another process: pet 5 of b = %s, %v", got.JSON, err)
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

func TestParseRedisURL(t *testing.T) {
	for _, tt := range []struct {
		url    string
		prefix string // "" for an error
		where  string // or the error's text
	}{
		{"redis://127.0.0.1:6379/0", DefaultRedisPrefix, "redis://127.0.0.1:6379/0"},
		{"rediss://:pw@cache.internal:6380/2?prefix=team-a:", "team-a:", "rediss://:xxxxx@cache.internal:6380/2"},
		{"redis://user:pw@h:1/3?dial_timeout=3s", DefaultRedisPrefix, "redis://user:xxxxx@h:1/3?dial_timeout=3s"},
		{"redis://pw@h:1/0", DefaultRedisPrefix, "redis://xxxxx@h:1/0"}, // a password in the user's slot
		{"redis://h:1/0?client_name=pw&db=2", DefaultRedisPrefix, "redis://h:1/0?client_name=xxxxx&db=2"},
		{"redis://:pw@h:1/0?nosuch=1", "", "unexpected option: nosuch"},
		{"redis://:pw@h:1/0?password=pw", "", "unexpected option: password"},
		{"redis://:pw@h:1/0?prefix=", "", "?prefix= is empty"},
		{"redis://:pw@h:1/x", "", "invalid database number"},
		{"http://:pw@h:1/0", "", "want a redis:// or rediss:// URL"},
		{"redis://:p w%zz@h/0", "", "not a URL"},
	} {
		_, prefix, where, err := ParseRedisURL(tt.url)
		switch {
		case tt.prefix == "" && (err == nil || !strings.Contains(err.Error(), tt.where)):
			t.Errorf("ParseRedisURL(%q) error = %v; want %q", tt.url, err, tt.where)
		case tt.prefix != "" && (err != nil || prefix != tt.prefix || where != tt.where):
			t.Errorf("ParseRedisURL(%q) = %q, %q, %v; want %q, %q", tt.url, prefix, where, err, tt.prefix, tt.where)
		}
		if err != nil && strings.Contains(strings.ReplaceAll(err.Error(), "password", ""), "pw") {
			t.Errorf("ParseRedisURL(%q): the error shows the password: %v", tt.url, err)
		}
		if strings.Contains(where, "pw") {
			t.Errorf("ParseRedisURL(%q) shows it as %q, with the password", tt.url, where)
		}
	}
}

// TestRedisWaitsForTheServerAtStart opens a store before its server is
// up: OpenRedis waits, and serves once the server answers.
func TestRedisWaitsForTheServerAtStart(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := OpenRedis(ctx, srv.URL(0), pets(3), Options{})
		if err == nil {
			r.Close()
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	srv.Restart()
	if err := <-done; err != nil {
		t.Errorf("OpenRedis with the server up 300ms later: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	srv.Kill()
	if _, err := OpenRedis(ctx, srv.URL(0), pets(3), Options{}); err == nil || !strings.Contains(err.Error(), "no answer before the start-up deadline") {
		t.Errorf("OpenRedis with no server = %v; want 'no answer before the start-up deadline'", err)
	}
}

// TestRedisLostAnswerIsNotReapplied loses the answer to a write on its way
// back from the server, which applied it: the write fails with
// ErrUnavailable, and it is not sent again, where it would come back as a
// conflict with itself and be applied twice.
func TestRedisLostAnswerIsNotReapplied(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	p := newCuttingProxy(t, srv.Addr)
	r := openRedis(t, "redis://"+p.addr()+"/0", pets(3))
	if _, err := r.Update(ctx, DefaultSession, 1, increment); err != nil {
		t.Fatal(err)
	}
	p.cutNextReply()
	if _, err := r.Update(ctx, DefaultSession, 1, increment); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a write whose answer was lost: error = %v; want ErrUnavailable", err)
	}
	if _, err := r.Update(ctx, DefaultSession, 1, increment); err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get(ctx, DefaultSession, 1); quantity(t, got) != 13 {
		t.Errorf("pet 1 = %s after three increments, the answer of one lost; want 13 (each applied once)", got.JSON)
	}
}

// A cuttingProxy forwards connections to a Redis server, and can drop the
// next array reply and close its connection, as a network failure would.
type cuttingProxy struct {
	ln  net.Listener
	cut atomic.Bool
}

func newCuttingProxy(t *testing.T, target string) *cuttingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttingProxy{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			go p.back(c, s)
		}
	}()
	return p
}

func (p *cuttingProxy) addr() string { return p.ln.Addr().String() }

// cutNextReply makes the proxy drop the next array reply (a script's).
func (p *cuttingProxy) cutNextReply() { p.cut.Store(true) }

// back copies the server's replies to the client, unless one is cut.
func (p *cuttingProxy) back(c, s net.Conn) {
	defer c.Close()
	defer s.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if err != nil {
			return
		}
		if buf[0] == '*' && p.cut.CompareAndSwap(true, false) {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

// TestRedisReadSeesEarlierWrites writes on one store while eight readers
// keep the other's fetches of the session busy: a read that arrives after
// a write was acknowledged must see it, so it may join only a fetch that
// begins after it arrived, never one already under way.
func TestRedisReadSeesEarlierWrites(t *testing.T) {
	ctx := context.Background()
	url := redistest.Start(t).URL(0)
	a, b := openRedis(t, url, pets(3)), openRedis(t, url, pets(3))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := b.Get(ctx, DefaultSession, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	defer wg.Wait()
	defer close(stop)
	for i := range 200 {
		if _, err := a.Update(ctx, DefaultSession, 1, setQuantity(int64(100+i))); err != nil {
			t.Fatal(err)
		}
		if r, err := b.Get(ctx, DefaultSession, 1); err != nil || quantity(t, r) != int64(100+i) {
			t.Fatalf("write %d acknowledged on a: b reads %s, %v; want quantity %d", i, r.JSON, err, 100+i)
		}
	}
}
