package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKeyCommandBounded: a key command that leaves a child running, or
// runs past its time, is stopped with its whole process group, at once;
// a failing one that prints a key on stderr does not have it shown.
func TestKeyCommandBounded(t *testing.T) {
	const stray = "vault-token-7f3c9a2e4b1d"
	pidFile := filepath.Join(t.TempDir(), "pid")
	for _, tt := range []struct {
		name, command string
		want          string // in the error
	}{
		{"a child left running", "sleep 150 & echo $! > " + pidFile + "; echo the-key-1234567", ""},
		{"past its time", "sleep 150 & echo $! > " + pidFile + "; sleep 150", "did not finish within"},
		{"the key on stderr", "echo token: " + stray + " refused >&2; exit 1", "failed (exit status 1): token: [REDACTED] refused"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(pidFile)
			k := &keySource{command: tt.command, timeout: 500 * time.Millisecond, secrets: NewSecrets()}
			begin := time.Now()
			err := k.fetch(context.Background())
			if took := time.Since(begin); took > 5*time.Second {
				t.Errorf("the command held the run %v; want it stopped within its time and a second", took)
			}
			switch {
			case tt.want == "" && (err != nil || k.key != "the-key-1234567"):
				t.Errorf("fetch = %v, key %q; want the key", err, k.key)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("fetch = %v; want an error with %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), stray) {
				t.Errorf("the message shows what looks like a key: %v", err)
			}
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
				if alive(pid) {
					t.Errorf("the child it left (pid %d) still runs; want its process group killed", pid)
				}
			}
		})
	}
}

// alive reports whether a process runs (a zombie, killed and not yet
// reaped, does not), after a moment for the kill to land.
func alive(pid int) bool {
	for range 20 {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
