package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// A Run is a command: it runs with its arguments, its environment (read
// through lookupEnv) and its streams until it is done or ctx ends, and
// returns what ended it (Code maps it to the exit status).
type Run func(ctx context.Context, args []string, lookupEnv func(string) (string, bool), stdout, stderr io.Writer) error

// The exit statuses every command of the kit gives.
const (
	ExitOK        = 0 // done; --help, --version
	ExitFailed    = 1 // what was checked failed: the contract broken, a health check, a bench target
	ExitCannotRun = 2 // bad flags or settings, nothing to check, a target that cannot be reached
)

// A failed error ends a command with ExitFailed.
type failed struct{ err error }

func (f *failed) Error() string {
	if f.err == nil {
		return ""
	}
	return f.err.Error()
}

func (f *failed) Unwrap() error { return f.err }

// Failed returns err as the error of a command whose check failed: exit
// status 1. A nil err says nothing more (the command has said it).
func Failed(err error) error { return &failed{err} }

// Said is the error of a command that could not run and has said why
// already: exit status 2, and no line more.
var Said = errors.New("")

// Code returns the exit status of a command that ended with err: 0 for
// nil or flag.ErrHelp, 1 for a Failed error, 2 for any other.
func Code(err error) int {
	var f *failed
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &f):
		return ExitFailed
	}
	return ExitCannotRun
}

// Main runs run with the process's arguments, environment and streams,
// until it returns or the process gets SIGINT or SIGTERM, prints its
// error on stderr as one line, name first (not for --help, nor where the
// error has nothing to say), and exits with its status.
func Main(name string, run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) && err.Error() != "" {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	}
	os.Exit(Code(err))
}

// CreateReport makes a report file, and its directory.
func CreateReport(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.Create(path)
}

// A FlagArg is a flag of a command line as it stands before a parser
// reads it.
type FlagArg struct {
	Name   string // without its dashes
	Value  string // after "=", else the next argument unless that is a flag ("" for none)
	Inline bool   // Value came after "="
}

// FlagArgs returns the flags in args up to "--", given with one dash or
// two: what a command needs to know of its arguments before, or without,
// a parse that may stop at a mistake.
func FlagArgs(args []string) []FlagArg {
	var flags []FlagArg
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		f := FlagArg{}
		f.Name, f.Value, f.Inline = strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !f.Inline && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			f.Value = args[i+1]
		}
		flags = append(flags, f)
	}
	return flags
}
