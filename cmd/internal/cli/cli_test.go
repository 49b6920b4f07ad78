package cli

import (
	"errors"
	"flag"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// list is a repeatable flag, as the commands declare them.
type list []string

func (l *list) String() string     { return "" }
func (l *list) List()              {}
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// key refuses "", as the mock's key flags do.
type key string

func (k *key) String() string { return "" }
func (k *key) NotEmpty()      {}
func (k *key) Set(v string) error {
	if v == "" {
		return errors.New("an empty key")
	}
	*k = key(v)
	return nil
}

// settings is a FlagSet with one flag of each kind.
type settings struct {
	n     int
	big   int64
	u     uint64
	ratio float64
	wait  time.Duration
	on    bool
	name  string
	items list
	key   key
}

func newFlags(s *settings) *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.IntVar(&s.n, "count", 0, "")
	fs.Int64Var(&s.big, "big", 0, "")
	fs.Uint64Var(&s.u, "seed", 0, "")
	fs.Float64Var(&s.ratio, "ratio", 0, "")
	fs.DurationVar(&s.wait, "wait", 0, "")
	fs.BoolVar(&s.on, "on", false, "")
	fs.StringVar(&s.name, "name", "", "")
	fs.Var(&s.items, "item", "")
	fs.Var(&s.key, "key", "")
	return fs
}

func envName(f string) string { return "APP_" + strings.ToUpper(f) }

func lookup(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// TestValueErrors: a value a flag refuses is named with the flag (--name,
// as typed in GNU style) or the variable, and worded by the flag's kind,
// never Go's "parse error".
func TestValueErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string // the whole message
	}{
		{"int", []string{"--count", "abc"}, nil, `--count "abc": want a whole number, such as 10 (see --help)`},
		{"int typed with one dash", []string{"-count", "abc"}, nil, `--count "abc": want a whole number, such as 10 (see --help)`},
		{"int in an = form", []string{"--count=1.5"}, nil, `--count "1.5": want a whole number, such as 10 (see --help)`},
		{"int64 out of range", []string{"--big", "9223372036854775808"}, nil, `--big "9223372036854775808": want a whole number; this one is out of range (see --help)`},
		{"uint negative", []string{"--seed", "-1"}, nil, `--seed "-1": want a whole number, 0 or more, such as 10 (see --help)`},
		{"float", []string{"--ratio", "half"}, nil, `--ratio "half": want a number, such as 0.5 (see --help)`},
		{"duration without unit", []string{"--wait", "5"}, nil, `--wait "5": want a duration such as 500ms, 2s or 1m30s (a number with its unit: ms, s, m, h) (see --help)`},
		{"bool", []string{"--on=yes"}, nil, `--on "yes": want true or false (also 1 or 0) (see --help)`},
		{"a value's own words", []string{"--key", ""}, nil, `--key "": an empty key (see --help)`},
		{"unknown flag", []string{"--nope"}, nil, `flag provided but not defined: --nope (see --help)`},
		{"unknown flag typed with one dash", []string{"-nope"}, nil, `flag provided but not defined: --nope (see --help)`},
		{"missing value", []string{"--count"}, nil, `flag needs an argument: --count (see --help)`},
		{"stray argument", []string{"serve"}, nil, `unexpected argument "serve" (see --help)`},
		{"int variable", nil, map[string]string{"APP_COUNT": "abc"}, `$APP_COUNT="abc": want a whole number, such as 10 (see --help)`},
		{"duration variable", nil, map[string]string{"APP_WAIT": "soon"}, `$APP_WAIT="soon": want a duration such as 500ms, 2s or 1m30s (a number with its unit: ms, s, m, h) (see --help)`},
		{"bool variable", nil, map[string]string{"APP_ON": "yes"}, `$APP_ON="yes": want true or false (also 1 or 0) (see --help)`},
		{"uint variable", nil, map[string]string{"APP_SEED": "-3"}, `$APP_SEED="-3": want a whole number, 0 or more, such as 10 (see --help)`},
		{"a NotEmpty variable set but empty", nil, map[string]string{"APP_KEY": ""}, `$APP_KEY is set but empty: an empty key; unset it, or give it a value (see --help)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := newFlags(&settings{})
			err := Parse(fs, tt.args)
			if err == nil {
				err = FromEnv(fs, lookup(tt.env), envName)
			}
			var usage *UsageError
			if !errors.As(err, &usage) {
				t.Fatalf("error = %v; want a *UsageError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %s\n          want %s", err, tt.want)
			}
		})
	}
}

// TestParseKeepsFlags: the values Parse wraps while it runs are the flags'
// own again afterwards, so FromEnv still splits a list, and a boolean flag
// still takes no argument.
func TestParseKeepsFlags(t *testing.T) {
	var s settings
	fs := newFlags(&s)
	if err := Parse(fs, []string{"--on", "--count", "3", "--item", "a,b"}); err != nil {
		t.Fatal(err)
	}
	if err := FromEnv(fs, lookup(map[string]string{"APP_NAME": "x", "APP_COUNT": "9"}), envName); err != nil {
		t.Fatal(err)
	}
	if !s.on || s.n != 3 || s.name != "x" || strings.Join(s.items, "|") != "a,b" {
		t.Errorf("settings = %+v; want on, count 3 (the flag wins), name x, one item a,b", s)
	}
	fs = newFlags(&s)
	if err := Parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	if err := FromEnv(fs, lookup(map[string]string{"APP_ITEM": "a, b"}), envName); err != nil || strings.Join(s.items, "|") != "a,b|a|b" {
		t.Errorf("list from the environment: %q, %v; want a and b appended", s.items, err)
	}
	if err := Parse(newFlags(&s), []string{"--help"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v; want flag.ErrHelp", err)
	}
}

// TestEmptyVariables: a variable set to "" reads as not set, except for a
// NotEmpty flag's, which is refused (above).
func TestEmptyVariables(t *testing.T) {
	var s settings
	fs := newFlags(&s)
	if err := Parse(fs, nil); err != nil {
		t.Fatal(err)
	}
	s.n, s.name = 7, "default" // as a default would
	env := map[string]string{"APP_COUNT": "", "APP_NAME": "", "APP_ON": "", "APP_WAIT": "", "APP_ITEM": ""}
	if err := FromEnv(fs, lookup(env), envName); err != nil {
		t.Fatalf("empty variables: %v", err)
	}
	if s.n != 7 || s.name != "default" || s.on || len(s.items) != 0 {
		t.Errorf("empty variables changed settings: %+v", s)
	}
	// Given on the command line, a NotEmpty flag's variable is not read.
	fs = newFlags(&s)
	if err := Parse(fs, []string{"--key", "k"}); err != nil {
		t.Fatal(err)
	}
	if err := FromEnv(fs, lookup(map[string]string{"APP_KEY": ""}), envName); err != nil || s.key != "k" {
		t.Errorf("--key k with $APP_KEY empty: %q, %v; want k", s.key, err)
	}
}

func TestMarkdownTableEndsWithHelp(t *testing.T) {
	rows := strings.Split(strings.TrimSpace(MarkdownTable(newFlags(&settings{}), envName)), "\n")
	if last := rows[len(rows)-1]; last != "| `--help` |  |  | show this help |" {
		t.Errorf("last row = %s; want --help, as PrintFlags ends", last)
	}
}

// TestVersion checks what --version says of each kind of build; a build
// without version control information is told how to stamp one, not that
// go build in a checkout records it (GOFLAGS=-buildvcs=false stops that).
func TestVersion(t *testing.T) {
	vcs := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	tests := []struct {
		name, stamped string
		bi            *debug.BuildInfo
		want          []string
	}{
		{"stamped", "v1.2.3", vcs(), []string{"v1.2.3"}},
		{"module version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, []string{"v0.4.0"}},
		{"commit", "", vcs("vcs.revision", "0123456789abcdef0123", "vcs.time", "2026-11-26T10:00:00Z", "vcs.modified", "true"),
			[]string{"commit 0123456789ab (2026-11-26T10:00:00Z, with uncommitted changes)"}},
		{"no vcs information", "", vcs("-buildvcs", "false"), []string{"-buildvcs=false", "go env GOFLAGS", `go build -ldflags "-X main.version=$(git describe --always --dirty)"`}},
		{"no build information", "", nil, []string{"unknown"}},
	}
	for _, tt := range tests {
		got := version(tt.stamped, tt.bi)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: version = %q; want it to say %q", tt.name, got, w)
			}
		}
		if strings.Contains(got, "records the commit") {
			t.Errorf("%s: version = %q, which promises what -buildvcs=false breaks", tt.name, got)
		}
	}
}
