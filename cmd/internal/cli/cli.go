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
	"time"
)

// Version returns the version of the running binary: stamped, if the build
// set one with -ldflags "-X main.version=...", else the module version,
// else the commit it was built from (go build in a git checkout records
// it, unless -buildvcs=false, which GOFLAGS may set), else a sentence
// saying how to get one.
func Version(stamped string) string {
	bi, _ := debug.ReadBuildInfo()
	return version(stamped, bi)
}

// unstamped is what Version says of a build that records no version: why,
// and the command that stamps one, which works however Go is set up.
const unstamped = `development build without version control information (built outside a git checkout, or with -buildvcs=false, which GOFLAGS may set: go env GOFLAGS); stamp one with go build -ldflags "-X main.version=$(git describe --always --dirty)"`

// version is Version, of the build bi describes (nil: none).
func version(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		return stamped
	}
	if bi == nil {
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
		return unstamped
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
// returned as a *UsageError that names it in GNU style (--name, never Go's
// -name) and says what it takes, and -h or --help as flag.ErrHelp, for the
// command to print its help on standard output. Arguments that are not
// flags are refused.
func Parse(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	// While parsing, each value is wrapped to catch a refusal with the
	// flag and the value, and worded here rather than by package flag.
	var refused *UsageError
	fs.VisitAll(func(f *flag.Flag) { f.Value = &checked{Value: f.Value, f: f, refused: &refused} })
	err := fs.Parse(args)
	fs.VisitAll(func(f *flag.Flag) { f.Value = f.Value.(*checked).Value })
	switch {
	case errors.Is(err, flag.ErrHelp):
		return flag.ErrHelp
	case refused != nil:
		return refused
	case err != nil:
		return &UsageError{Msg: gnu(err.Error())}
	case fs.NArg() > 0:
		return Usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// A checked value is a flag's value while Parse runs: it records a refusal.
type checked struct {
	flag.Value
	f       *flag.Flag
	refused **UsageError
}

func (c *checked) Set(v string) error {
	err := c.Value.Set(v)
	if err != nil && *c.refused == nil {
		*c.refused = &UsageError{Msg: fmt.Sprintf("--%s %q: %s", c.f.Name, v, valueError(c.Value, err))}
	}
	return err
}

// IsBoolFlag keeps a boolean flag one that takes no argument.
func (c *checked) IsBoolFlag() bool {
	b, ok := c.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// gnu rewrites package flag's messages that name a flag as -name to --name,
// the way the help and the README write it.
func gnu(msg string) string {
	for _, prefix := range []string{"flag provided but not defined: -", "flag needs an argument: -"} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok && !strings.HasPrefix(rest, "-") {
			return prefix + "-" + rest
		}
	}
	return msg
}

// A ListValue is a repeatable flag. On the command line it is repeated,
// one value each time (a value may hold a comma: a key may); its
// environment variable holds a comma-separated list, each element set in
// turn.
type ListValue interface {
	flag.Value
	List()
}

// A NotEmpty value refuses to be set to "": a key, say, where "" is an
// unset secret passed on (--api-key "$UNSET", or a CI variable set from a
// secret that does not exist), never a choice. FromEnv hands such a flag's
// variable to Set when it is set to "", instead of reading it as not set.
type NotEmpty interface {
	flag.Value
	NotEmpty()
}

// FromEnv sets every flag not given on the command line from its
// environment variable, named by env ("" for flags that have none), and
// refuses a value the flag does not take, naming the variable. lookupEnv
// is os.LookupEnv or one like it: a variable set to "" counts as not set,
// except for a NotEmpty flag, which refuses it.
func FromEnv(fs *flag.FlagSet, lookupEnv func(string) (string, bool), env func(flag string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := env(f.Name)
		if name == "" || given[f.Name] || err != nil {
			return
		}
		v, set := lookupEnv(name)
		if _, notEmpty := f.Value.(NotEmpty); !set || v == "" && !notEmpty {
			return
		}
		values := []string{v}
		if _, ok := f.Value.(ListValue); ok {
			values = strings.Split(v, ",")
		}
		for _, one := range values {
			if e := f.Value.Set(strings.TrimSpace(one)); e != nil {
				if v == "" {
					err = Usagef("$%s is set but empty: %s; unset it, or give it a value", name, valueError(f.Value, e))
				} else {
					err = Usagef("$%s=%q: %s", name, v, valueError(f.Value, e))
				}
				return
			}
		}
	})
	return err
}

// valueError words a flag's refusal of a value, saying what it takes: by
// its kind for package flag's own values, else in the value's own words.
func valueError(value flag.Value, err error) string {
	if b, ok := value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return "want true or false (also 1 or 0)"
	}
	if g, ok := value.(flag.Getter); ok {
		outOfRange := strings.Contains(err.Error(), "out of range")
		switch g.Get().(type) {
		case int, int64:
			if outOfRange {
				return "want a whole number; this one is out of range"
			}
			return "want a whole number, such as 10"
		case uint, uint64:
			if outOfRange {
				return "want a whole number, 0 or more; this one is out of range"
			}
			return "want a whole number, 0 or more, such as 10"
		case float64:
			return "want a number, such as 0.5"
		case time.Duration:
			return "want a duration such as 500ms, 2s or 1m30s (a number with its unit: ms, s, m, h)"
		}
	}
	return err.Error()
}

// PrintFlags writes each flag of fs in GNU style, --name VALUE, with its
// help, its default and its environment variable (env gives "" for none).
func PrintFlags(w io.Writer, fs *flag.FlagSet, env func(flag string) string) {
	PrintFlagsOf(w, fs, env, nil)
	fmt.Fprintf(w, "  --help\n      show this help\n")
}

// PrintFlagsOf writes the flags of fs that keep accepts (nil: all) as
// PrintFlags does, without --help: for a help that lists its flags in
// groups.
func PrintFlagsOf(w io.Writer, fs *flag.FlagSet, env func(flag string) string, keep func(name string) bool) {
	fs.VisitAll(func(f *flag.Flag) {
		if keep != nil && !keep(f.Name) {
			return
		}
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
// environment variable, default, meaning, and --help last, as PrintFlags
// writes them. A test compares it with the README, so the two never
// disagree.
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
	b.WriteString("| `--help` |  |  | show this help |\n")
	return b.String()
}
