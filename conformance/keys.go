package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// minRefresh is the least time between two runs of the key command after
// a 401: a target that refuses every key does not have it run for every
// request.
const minRefresh = 5 * time.Second

// maxKeyOutput caps what the key command may print.
const maxKeyOutput = 64 << 10

// A keySource gives the API key: the configured one, or the one a key
// command (--api-key-command) prints, run again when the target answers
// 401 to a key that worked before; added to the secrets before it is used.
type keySource struct {
	command string
	timeout time.Duration
	secrets *Secrets
	worked  atomic.Bool // a request with the key got another answer than 401

	mu        sync.Mutex // guards key, gen and refreshed, and serialises runs of the command
	key       string
	gen       int       // counts the keys the command gave
	refreshed time.Time // when the command last ran after a 401
}

func (k *keySource) current() (string, int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.key, k.gen
}

func (k *keySource) fetch(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.run(ctx)
}

// refresh gives a key to try again after a 401 to the key of generation
// gen: the one another request fetched since, or a new one from the
// command; false when there is no command, the key never worked, the
// command ran moments ago, or it gave the same key.
func (k *keySource) refresh(ctx context.Context, gen int) (string, int, bool) {
	if k.command == "" || !k.worked.Load() {
		return "", 0, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gen != gen {
		return k.key, k.gen, true
	}
	if time.Since(k.refreshed) < minRefresh {
		return "", 0, false
	}
	k.refreshed = time.Now()
	old := k.key
	if err := k.run(ctx); err != nil || k.key == old {
		return "", 0, false
	}
	return k.key, k.gen, true
}

// run runs the command with the shell and takes its output, trimmed, as
// the key; its stderr is shown, redacted, only where it fails.
func (k *keySource) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	cmd := shellCommand(ctx, k.command)
	cmd.WaitDelay = time.Second
	var out, errOut capped
	out.max, errOut.max = maxKeyOutput, 2048
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	killLeftovers(cmd)
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it exited; a child it left kept the pipes open
	}
	key := strings.TrimSpace(out.b.String())
	k.secrets.Add(KeySecret(key)) // before anything could show it
	// A failing command may print the key on stderr, where nothing says
	// it is one: every word that looks like a token is hidden too.
	said := strings.TrimSpace(tokenLike.ReplaceAllStringFunc(k.secrets.Redactor().String(errOut.b.String()), hideToken))
	if said != "" {
		said = ": " + strings.ReplaceAll(said, "\n", " ")
	}
	switch {
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("--api-key-command did not finish within %s%s", k.timeout, said)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("--api-key-command failed (%s)%s", ee.ProcessState, said)
		}
		return fmt.Errorf("--api-key-command: %v", err)
	case out.over:
		return fmt.Errorf("--api-key-command printed more than %d KiB: want the key alone", maxKeyOutput>>10)
	case key == "":
		return fmt.Errorf("--api-key-command printed no key%s", said)
	case strings.ContainsAny(key, "\r\n"):
		return errors.New("--api-key-command printed more than one line: want the key alone")
	}
	k.key = key
	k.gen++
	return nil
}

// tokenLike matches a word that may be a key: 12 characters or more of
// those keys and tokens are written in (JWTs, base64, hex).
var tokenLike = regexp.MustCompile(`[A-Za-z0-9_\-.=+/~]{12,}`)

// hideToken hides a tokenLike word that holds a digit and a letter, as
// keys do and words of a message seldom do.
func hideToken(w string) string {
	if strings.ContainsAny(w, "0123456789") && strings.IndexFunc(w, func(r rune) bool { return r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' }) >= 0 {
		return "[REDACTED]"
	}
	return w
}

// capped keeps the first max bytes written to it and notes the rest.
type capped struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); len(p) > room {
		c.over = true
		c.b.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.b.Write(p)
}
