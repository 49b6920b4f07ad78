package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/petstore/inventory-kit/cmd/internal/cli"
	"github.com/petstore/inventory-kit/mockserver/store/redistest"
)

// A server is one child process under test: the mock or the baseline.
type server struct {
	name string
	addr string
	cmd  *exec.Cmd
	// exited is closed when the process has exited and been waited for.
	exited <-chan struct{}
	// startup is the time from exec to the first 200 on GET /v1/inventory.
	startup time.Duration
}

// start execs argv with --addr set to a free port, its output to
// /dev/null, and waits until GET /v1/inventory answers 200. A child that
// exits before it serves is started again, twice at most, on another port:
// the free port may have been taken in between.
func start(ctx context.Context, name string, argv []string) (s *server, err error) {
	for range 3 {
		if s, err = startOnce(ctx, name, argv); err == nil || !errors.Is(err, errExited) {
			break
		}
	}
	return s, err
}

// errExited is the error of a child that exited before it served.
var errExited = errors.New("exited before it served; run it alone to see why")

func startOnce(ctx context.Context, name string, argv []string) (*server, error) {
	addr, err := redistest.FreeAddr()
	if err != nil {
		return nil, err
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devnull.Close()
	cmd := exec.Command(argv[0], append(argv[1:], "--addr", addr)...)
	cmd.Stdout, cmd.Stderr = devnull, devnull
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	s := &server{name: name, addr: addr, cmd: cmd, exited: exited}
	req := listRequest(addr, benchKey).raw
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("%s: %w (%s)", name, errExited, cmd.ProcessState)
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		default:
		}
		if time.Since(t0) > 60*time.Second {
			s.stop()
			return nil, fmt.Errorf("%s: no 200 on GET /v1/inventory within 60s", name)
		}
		c, err := dial(addr)
		if err != nil {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		status, err := c.do(req, nil)
		c.close()
		if err == nil && status == 200 {
			s.startup = time.Since(t0)
			return s, nil
		}
		if err == nil {
			s.stop()
			return nil, fmt.Errorf("%s: GET /v1/inventory: status %d; want 200", name, status)
		}
	}
}

// stop interrupts the child, and kills it if it is still there after 5s.
func (s *server) stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// rss returns the child's resident memory in bytes.
func (s *server) rss() (int64, error) { return cli.RSS(strconv.Itoa(s.cmd.Process.Pid)) }

// cpu returns the CPU time, user and system, the child has used so far,
// from /proc/PID/stat (in clock ticks of 10ms: USER_HZ is 100 on Linux).
func (s *server) cpu() (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// After "pid (comm) ", utime and stime are fields 14 and 15, counting from 1.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", s.cmd.Process.Pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bad /proc/%d/stat", s.cmd.Process.Pid)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
