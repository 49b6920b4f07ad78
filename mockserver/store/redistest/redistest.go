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
	exited chan struct{} // closed when cmd has exited
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
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		msg := "redis-server is not installed (apt-get install redis-server); the Redis store tests need it, and .ci/run installs it"
		if os.Getenv(RequireEnv) != "" {
			t.Fatalf("%s, and $%s is set", msg, RequireEnv)
		}
		t.Skip(msg)
	}
	if len(args) == 0 {
		args = NoPersistence
	}
	s := &Server{t: t, args: append([]string{bin}, args...), dir: t.TempDir()}
	var last error
	for range 3 {
		if s.Addr, last = freeAddr(); last != nil {
			continue
		}
		if last = s.start(); last == nil {
			t.Cleanup(s.Kill)
			return s
		}
	}
	t.Fatalf("redis-server: %v", last)
	return nil
}

// URL returns the server's URL with database db.
func (s *Server) URL(db int) string { return "redis://" + s.Addr + "/" + strconv.Itoa(db) }

// start runs the server on s.Addr and waits until it answers PING.
func (s *Server) start() error {
	_, port, _ := net.SplitHostPort(s.Addr)
	argv := append(append([]string{}, s.args...), "--port", port, "--bind", "127.0.0.1", "--dir", s.dir,
		"--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"))
	cmd := exec.Command(argv[0], argv[1:]...)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("exited at start: %s", lastLines(string(log), 3))
		default:
		}
		if ping(s.Addr) {
			s.mu.Lock()
			s.cmd, s.exited = cmd, exited
			s.mu.Unlock()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Kill()
	<-exited
	return fmt.Errorf("no PONG on %s within 10s", s.Addr)
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

func freeAddr() (string, error) {
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
