// Package redistest starts real Redis servers for tests: Debian's
// redis-server, on 127.0.0.1 and a free port, with its files in a
// temporary directory, stopped by its PID when the test ends.
//
// A test that needs one calls Start; where redis-server is not installed
// the test is skipped with a message, unless the environment variable
// RequireEnv is set (CI sets it), where it fails.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// RequireEnv, when set, makes a missing redis-server a test failure rather
// than a skip.
const RequireEnv = "INVENTORY_REQUIRE_REDIS"

// A Server is a redis-server process started by Start.
type Server struct {
	Addr string // 127.0.0.1:PORT
	t    testing.TB
	args []string
	dir  string

	mu     sync.Mutex // guards cmd and exited
	cmd    *exec.Cmd
	exited <-chan struct{} // closed when cmd has exited
}

// NoPersistence are the arguments of a server that keeps nothing on disk:
// a restart empties it.
var NoPersistence = []string{"--save", "", "--appendonly", "no"}

// Durable are the arguments of a server that syncs every write to its
// append-only file before it answers: a kill -9 loses nothing it
// acknowledged.
var Durable = []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}

// Start starts a redis-server with args (NoPersistence if none), and stops
// it when the test ends. It skips the test if redis-server is not
// installed.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	if len(args) == 0 {
		args = NoPersistence
	}
	s := &Server{t: t, args: args, dir: t.TempDir()}
	var err error
	for range 3 {
		if s.Addr, err = FreeAddr(); err == nil {
			if err = s.start(); err == nil {
				t.Cleanup(s.Kill)
				return s
			}
		}
		if errors.Is(err, exec.ErrNotFound) {
			msg := "redis-server is not installed (apt-get install redis-server); the Redis store tests need it, and .ci/run installs it"
			if os.Getenv(RequireEnv) != "" {
				t.Fatalf("%s, and $%s is set", msg, RequireEnv)
			}
			t.Skip(msg)
		}
	}
	t.Fatalf("%v", err)
	return nil
}

// URL returns the server's URL with database db.
func (s *Server) URL(db int) string { return "redis://" + s.Addr + "/" + strconv.Itoa(db) }

// start runs the server on s.Addr and waits until it answers PING.
func (s *Server) start() error {
	cmd, exited, err := Launch(context.Background(), s.Addr, s.dir, s.args...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return nil
}

// Launch starts redis-server with args on addr (127.0.0.1:PORT), its files
// and its log in dir, and waits until it answers PING: 10s at most, or
// until ctx is done. Exited is closed when the process has exited and been
// waited for. The error of a missing redis-server wraps exec.ErrNotFound.
// The inventory-bench starts its Redis with it.
func Launch(ctx context.Context, addr, dir string, args ...string) (cmd *exec.Cmd, exited <-chan struct{}, err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, nil, fmt.Errorf("redis-server is not installed (apt-get install redis-server): %w", err)
	}
	_, port, _ := net.SplitHostPort(addr)
	cmd = exec.Command(bin, append(args[:len(args):len(args)], "--port", port, "--bind", "127.0.0.1", "--dir", dir,
		"--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log"))...)
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			return nil, nil, fmt.Errorf("redis-server exited at start: %s", lastLines(string(log), 3))
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
			return nil, nil, ctx.Err()
		default:
		}
		if ping(addr) {
			return cmd, done, nil
		}
	}
	cmd.Process.Kill()
	<-done
	return nil, nil, fmt.Errorf("redis-server: no PONG on %s within 10s", addr)
}

// Kill stops the server at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	s.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		<-exited
	}
}

// Restart starts the server again on the same port and directory: a
// Durable server comes back with what it acknowledged.
func (s *Server) Restart() {
	s.t.Helper()
	var err error
	for range 50 { // the port can take a moment to be free again
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.t.Fatalf("redis-server restart: %v", err)
}

// ping reports whether a Redis server at addr answers PING.
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	// A server with a password answers NOAUTH: it is up all the same.
	return err == nil && (strings.HasPrefix(line, "+PONG") || strings.HasPrefix(line, "-NOAUTH"))
}

// FreeAddr returns a loopback address with a port that was free a moment
// ago.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], " | ")
}
