// Package cli holds what the kit's commands share on their command lines,
// so that all of them behave alike: the version stamped at build time,
// help in GNU style on standard output, flags read from the environment,
// and one line for a bad flag.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// Version returns the version of the running binary: stamped, if the build
// set one with -ldflags "-X main.version=...", else the module version,
// else the commit it was built from (go build in a git checkout records
// it), else a sentence saying how to get one.
func Version(stamped string) string {
	if stamped != "" {
		return stamped
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", with uncommitted changes"
			}
		}
	}
	if rev == "" {
		return "development build without version control information (go build in a git checkout records the commit)"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("commit %s (%s%s)", rev, at, modified)
}

// A UsageError is a mistake on the command line. Commands print it as one
// line with a hint to --help, and exit 2.
type UsageError struct{ Msg string }

// Error returns the message with the hint.
func (e *UsageError) Error() string { return e.Msg + " (see --help)" }

// Usagef formats a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// Parse parses args into fs, whose own output is discarded: a bad flag is
// returned as a *UsageError, and -h or --help as flag.ErrHelp, for the
// command to print its help on standard output. Arguments that are not
// flags are refused.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return &UsageError{Msg: err.Error()}
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// FromEnv sets every flag not given on the command line from its
// environment variable, named by env ("" for flags that have none), and
// refuses a value the flag does not take, naming the variable.
func FromEnv(fs *flag.FlagSet, getenv func(string) string, env func(flag string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := env(f.Name)
		if name == "" || given[f.Name] || err != nil {
			return
		}
		v := getenv(name)
		if v == "" {
			return
		}
		if e := f.Value.Set(v); e != nil {
			err = Usagef("$%s=%q: %s", name, v, valueError(f, e))
		}
	})
	return err
}

// valueError words a flag's refusal of a value, saying what it takes.
func valueError(f *flag.Flag, err error) string {
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "want true or false (also 1 or 0)"
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "strconv.") {
		msg = msg[i+2:]
	}
	return msg
}

// PrintFlags writes each flag of fs in GNU style, --name VALUE, with its
// help, its default and its environment variable (env gives "" for none).
func PrintFlags(w io.Writer, fs *flag.FlagSet, env func(flag string) string) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		arg := "--" + f.Name
		if name != "" {
			arg += " " + strings.ToUpper(name)
		}
		fmt.Fprintf(w, "  %s\n      %s", arg, usage)
		if d := Default(f); d != "" {
			fmt.Fprintf(w, " (default %s)", d)
		}
		if e := env(f.Name); e != "" {
			fmt.Fprintf(w, " [$%s]", e)
		}
		fmt.Fprintln(w)
	})
	fmt.Fprintf(w, "  --help\n      show this help\n")
}

// Default returns a flag's default as help shows it; "" for none.
func Default(f *flag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "0s", "[]":
		return ""
	}
	return f.DefValue
}

// MarkdownTable renders the flags of fs as the README's table: flag,
// environment variable, default, meaning. A test compares it with the
// README, so the two never disagree.
func MarkdownTable(fs *flag.FlagSet, env func(flag string) string) string {
	var b strings.Builder
	b.WriteString("| flag | environment | default | meaning |\n|---|---|---|---|\n")
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		arg := "--" + f.Name
		if name != "" {
			arg += " " + strings.ToUpper(name)
		}
		e := env(f.Name)
		if e != "" {
			e = "`" + e + "`"
		}
		d := Default(f)
		if d != "" {
			d = "`" + d + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", arg, e, d, strings.ReplaceAll(usage, "|", `\|`))
	})
	return b.String()
}
