package cli

import (
	"errors"
	"flag"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"
)

func init() {
	NamedTypes["testkey"] = func(v string) (any, error) { // refuses "", as the mock's key flags do
		if v == "" {
			return nil, errors.New("an empty key")
		}
		return v, nil
	}
}

// settings are flags of each kind, as a command declares them.
type settings struct {
	N     int           `name:"count" env:"APP_COUNT"`
	Big   int64         `name:"big" env:"APP_BIG"`
	U     uint64        `name:"seed" env:"APP_SEED"`
	Cover float64       `name:"min-coverage" env:"APP_MIN_COVERAGE" type:"percent"`
	Size  int64         `name:"max-bytes" env:"APP_MAX_BYTES" type:"size"`
	Wait  time.Duration `name:"wait" env:"APP_WAIT"`
	On    bool          `name:"on" env:"APP_ON"`
	Name  string        `name:"name" env:"APP_NAME" default:"default"`
	Form  string        `name:"format" env:"APP_FORMAT" enum:"text,json" default:"text"`
	Items []string      `name:"item" env:"APP_ITEM"`
	Key   string        `name:"key" env:"APP_KEY" type:"testkey" notempty:""`
}

func lookup(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

// TestValueErrors: a value a flag refuses is named with the flag (--name,
// as typed in GNU style) or the variable, and worded by the flag's kind,
// never the parser's own words.
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
		{"percent", []string{"--min-coverage", "half"}, nil, `--min-coverage "half": want a percentage from 0 to 100, such as 80 (see --help)`},
		{"size", []string{"--max-bytes", "1MB"}, nil, `--max-bytes "1MB": want a positive size such as 16MiB (see --help)`},
		{"enum", []string{"--format", "xml"}, nil, `--format "xml": want text or json (see --help)`},
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
		{"a notempty variable set but empty", nil, map[string]string{"APP_KEY": ""}, `$APP_KEY is set but empty: an empty key; unset it, or give it a value (see --help)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New("test", &settings{}, nil, true).Parse(tt.args, lookup(tt.env))
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

// TestParse: the command line wins over the environment; a list's
// variable is split at commas, a list flag is not; a boolean flag takes no
// argument, and a value that starts with a dash is a value.
func TestParse(t *testing.T) {
	var s settings
	p := New("test", &s, nil, true)
	err := p.Parse([]string{"--on", "--count", "3", "--item", "a,b", "--name", "-x", "--min-coverage", "62.5%", "--max-bytes", "2KiB"},
		lookup(map[string]string{"APP_NAME": "y", "APP_COUNT": "9", "APP_WAIT": "2s"}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.On || s.N != 3 || s.Name != "-x" || strings.Join(s.Items, "|") != "a,b" || s.Wait != 2*time.Second || s.Cover != 62.5 || s.Size != 2048 {
		t.Errorf("settings = %+v; want on, count 3 (the flag wins), name -x, one item a,b, wait 2s, 62.5, 2048", s)
	}
	if !p.Given("count") || p.Given("wait") || !p.FromEnv("wait") || p.FromEnv("count") {
		t.Errorf("given/from the environment wrong: count %v/%v, wait %v/%v", p.Given("count"), p.FromEnv("count"), p.Given("wait"), p.FromEnv("wait"))
	}
	s = settings{}
	if err := New("test", &s, nil, true).Parse(nil, lookup(map[string]string{"APP_ITEM": "a, b"})); err != nil || strings.Join(s.Items, "|") != "a|b" {
		t.Errorf("list from the environment: %q, %v; want a and b", s.Items, err)
	}
	s = settings{}
	if err := New("test", &s, nil, false).Parse(nil, lookup(map[string]string{"APP_COUNT": "4"})); err != nil || s.N != 0 {
		t.Errorf("a command without variables read $APP_COUNT: %d, %v", s.N, err)
	}
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"--count", "1", "--help"}} {
		if err := New("test", &settings{}, nil, true).Parse(args, lookup(nil)); !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%q: %v; want flag.ErrHelp", args, err)
		}
	}
}

// TestEmptyVariables: a variable set to "" reads as not set, except for a
// notempty flag's, which is refused (above).
func TestEmptyVariables(t *testing.T) {
	var s settings
	env := map[string]string{"APP_COUNT": "", "APP_NAME": "", "APP_ON": "", "APP_WAIT": "", "APP_ITEM": ""}
	if err := New("test", &s, nil, true).Parse(nil, lookup(env)); err != nil {
		t.Fatalf("empty variables: %v", err)
	}
	if s.N != 0 || s.Name != "default" || s.On || len(s.Items) != 0 {
		t.Errorf("empty variables changed settings: %+v", s)
	}
	// Given on the command line, a notempty flag's variable is not read.
	if err := New("test", &s, nil, true).Parse([]string{"--key", "k"}, lookup(map[string]string{"APP_KEY": ""})); err != nil || s.Key != "k" {
		t.Errorf("--key k with $APP_KEY empty: %q, %v; want k", s.Key, err)
	}
}

func TestMarkdownTable(t *testing.T) {
	rows := strings.Split(strings.TrimSpace(New("test", &settings{}, nil, true).MarkdownTable()), "\n")
	if last := rows[len(rows)-1]; last != "| `--help` |  |  | show this help |" {
		t.Errorf("last row = %s; want --help, as PrintFlags ends", last)
	}
	if want := "| `--name STRING` | `APP_NAME` | `default` |  |"; !slices.Contains(rows, want) {
		t.Errorf("rows = %q; want %s", rows, want)
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

// TestFlagArgs checks the flags read before a parse: every form the
// parser takes, a flag with no value, and nothing after "--".
func TestFlagArgs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []FlagArg
	}{
		{[]string{"--api-key", "k1", "-api-key=k2", "pos"}, []FlagArg{{"api-key", "k1", false}, {"api-key", "k2", true}}},
		{[]string{"--health-check", "--timeout", "-5s"}, []FlagArg{{"health-check", "", false}, {"timeout", "", false}, {"5s", "", false}}},
		{[]string{"--health-check=false", "--report="}, []FlagArg{{"health-check", "false", true}, {"report", "", true}}},
		{[]string{"--har", "x.har", "--", "--api-key", "kept"}, []FlagArg{{"har", "x.har", false}}},
	} {
		if got := FlagArgs(tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("FlagArgs(%q) = %+v; want %+v", tt.args, got, tt.want)
		}
	}
}
