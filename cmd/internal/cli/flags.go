package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/petstore/inventory-kit/spec/report"
)

// A Parser reads a command's flags into its struct, whose fields declare
// them with kong's tags: name, help, placeholder, default, group, env
// (the flag's environment variable), embed and envprefix (a group of
// flags, such as Reports), and type, naming one of the checks of
// NamedTypes (an API key, an origin, a size). A field tagged notempty
// refuses "" from its variable, where other flags read "" as not set.
//
// Kong parses the command line; the environment is read here, through the
// lookupEnv given to Parse, so that tests need not set the process's.
type Parser struct {
	k     *kong.Kong
	flags []*kong.Flag      // by name, as help lists them
	env   map[string]string // flag name → its variable; nil for a command without

	lookupEnv func(string) (string, bool)
	asked     map[string]bool   // flags not on the command line, offered to the environment
	fromEnv   map[string]string // flags set from their variable → the variable's value
}

// New returns the parser of cmd, a pointer to the command's flag struct.
// vars fill the ${name} references of its tags. With env false the
// command reads no environment variable, and its help names none.
func New(name string, cmd any, vars map[string]string, env bool) *Parser {
	p := &Parser{}
	if env {
		p.env = map[string]string{}
	}
	opts := []kong.Option{
		kong.Name(name), kong.NoDefaultHelp(), kong.Writers(io.Discard, io.Discard), kong.Exit(func(int) {}),
		kong.WithHyphenPrefixedParameters(true), // --seed -1 is a value, as package flag reads it
		kong.Vars(vars),
		kong.Resolvers(kong.ResolverFunc(p.resolve)),
		kong.PostBuild(func(k *kong.Kong) error {
			// Kong would read the process's environment itself: the
			// variables move here, read by resolve through lookupEnv.
			for _, f := range k.Model.Flags {
				if env && len(f.Envs) > 0 {
					p.env[f.Name] = f.Envs[0]
				}
				f.Envs, f.Tag.Envs = nil, nil
			}
			return nil
		}),
	}
	for typ, m := range typeMappers {
		opts = append(opts, kong.TypeMapper(typ, m))
	}
	for name, check := range NamedTypes {
		opts = append(opts, kong.NamedMapper(name, mapper(check)))
	}
	k, err := kong.New(cmd, opts...)
	if err != nil {
		panic(fmt.Sprintf("cli.New(%s): %v", name, err)) // a mistake in the struct's tags
	}
	p.k = k
	p.flags = slices.Clone(k.Model.Flags)
	slices.SortFunc(p.flags, func(a, b *kong.Flag) int { return strings.Compare(a.Name, b.Name) })
	return p
}

// Parse reads args, then sets each flag not given from its environment
// variable, read through lookupEnv (os.LookupEnv or one like it): a
// variable set to "" counts as not set, except for a notempty flag, which
// refuses it; a list's variable holds a comma-separated list. It returns
// flag.ErrHelp for -h or --help, and a *UsageError for a mistake. Arguments
// that are not flags are refused.
func (p *Parser) Parse(args []string, lookupEnv func(string) (string, bool)) error {
	p.lookupEnv, p.asked, p.fromEnv = lookupEnv, map[string]bool{}, map[string]string{}
	args, help := p.normalise(args)
	if help {
		return flag.ErrHelp
	}
	if _, err := p.k.Parse(args); err != nil {
		return p.usage(err)
	}
	return nil
}

// Given reports whether the last Parse read the flag from the command line.
func (p *Parser) Given(name string) bool { return p.lookup(name) != nil && !p.asked[name] }

// FromEnv reports whether the last Parse set the flag from its variable.
func (p *Parser) FromEnv(name string) bool { _, ok := p.fromEnv[name]; return ok }

// Env returns the environment variable of a flag; "" for none.
func (p *Parser) Env(name string) string { return p.env[name] }

func (p *Parser) lookup(name string) *kong.Flag {
	for _, f := range p.flags {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// normalise rewrites flags given Go's way, -name, as --name (a value that
// starts with a dash stays as it is), and reports whether help is asked.
func (p *Parser) normalise(args []string) ([]string, bool) {
	out := slices.Clone(args)
	value := false // the argument is the value of the flag before it
	for i, a := range out {
		if value {
			value = false
			continue
		}
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && (a[1] < '0' || a[1] > '9') {
			a = "-" + a
			out[i] = a
		}
		name, _, eq := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch f := p.lookup(name); {
		case !strings.HasPrefix(a, "--"):
		case name == "help" || name == "h":
			return nil, true
		case f != nil && !eq && !f.IsBool():
			value = true
		}
	}
	return out, false
}

// resolve is kong's resolver of the environment: it gives the variable's
// value of a flag not on the command line, split into a list for a list.
func (p *Parser) resolve(_ *kong.Context, _ *kong.Path, f *kong.Flag) (any, error) {
	p.asked[f.Name] = true
	name := p.env[f.Name]
	if name == "" || p.lookupEnv == nil {
		return nil, nil
	}
	v, set := p.lookupEnv(name)
	if !set || v == "" && !f.Tag.Has("notempty") {
		return nil, nil
	}
	p.fromEnv[f.Name] = v
	if f.IsSlice() {
		var list []any
		for _, one := range strings.Split(v, ",") {
			list = append(list, strings.TrimSpace(one))
		}
		return list, nil
	}
	return strings.TrimSpace(v), nil
}

// A refusal is a flag's refusal of a value, said without the flag: usage
// words it with the flag or the variable it came from.
type refusal struct {
	flag, value, why string
	missing          bool // no value followed the flag
}

func (r *refusal) Error() string { return r.why }

// usage words an error of kong's as the kit's commands word it.
func (p *Parser) usage(err error) error {
	var r *refusal
	msg := err.Error()
	switch {
	case errors.As(err, &r) && r.missing:
		return Usagef("flag needs an argument: --%s", r.flag)
	case r != nil && p.FromEnv(r.flag) && p.fromEnv[r.flag] == "":
		return Usagef("$%s is set but empty: %s; unset it, or give it a value", p.env[r.flag], r.why)
	case r != nil && p.FromEnv(r.flag):
		return Usagef("$%s=%q: %s", p.env[r.flag], p.fromEnv[r.flag], r.why)
	case r != nil:
		return Usagef("--%s %q: %s", r.flag, r.value, r.why)
	case strings.HasPrefix(msg, "unknown flag "):
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "unknown flag "), ",")
		return Usagef("flag provided but not defined: %s", name)
	case strings.HasPrefix(msg, "unexpected argument "):
		return Usagef("unexpected argument %q", strings.TrimPrefix(msg, "unexpected argument "))
	}
	return &UsageError{Msg: msg}
}

// A Check reads one value of a flag: it returns the value to keep, or
// says why it refuses it.
type Check func(string) (any, error)

// NamedTypes are the checks a flag names with its type tag, such as
// type:"size". A command adds its own before it calls New.
var NamedTypes = map[string]Check{
	"percent": func(s string) (any, error) { return report.ParsePercent(s) }, // 80, 62.5%
	"size": func(s string) (any, error) { // 16MiB, 512KiB, 1048576
		mult := int64(1)
		for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
			if v, ok := strings.CutSuffix(s, suffix); ok {
				s, mult = v, m
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > (1<<62)/mult {
			return nil, errors.New("want a positive size such as 16MiB")
		}
		return n * mult, nil
	},
}

// typeMappers read the kinds of value the commands' flags have, each
// refusal worded by what the flag takes.
var typeMappers = map[reflect.Type]kong.Mapper{
	reflect.TypeFor[string](): mapper(func(s string) (any, error) { return s, nil }),
	reflect.TypeFor[[]string](): mapper(func(s string) (any, error) { // a repeatable flag: blanks are dropped
		return strings.TrimSpace(s), nil
	}),
	reflect.TypeFor[int]():   mapper(whole[int](strconv.IntSize)),
	reflect.TypeFor[int64](): mapper(whole[int64](64)),
	reflect.TypeFor[uint64](): mapper(func(s string) (any, error) {
		n, err := strconv.ParseUint(s, 0, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, errors.New("want a whole number, 0 or more; this one is out of range")
		case err != nil:
			return nil, errors.New("want a whole number, 0 or more, such as 10")
		}
		return n, nil
	}),
	reflect.TypeFor[time.Duration](): mapper(func(s string) (any, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, errors.New("want a duration such as 500ms, 2s or 1m30s (a number with its unit: ms, s, m, h)")
		}
		return d, nil
	}),
	reflect.TypeFor[bool](): boolMapper{},
}

// whole reads a signed whole number of bits bits.
func whole[T int | int64](bits int) Check {
	return func(s string) (any, error) {
		n, err := strconv.ParseInt(s, 0, bits)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, errors.New("want a whole number; this one is out of range")
		case err != nil:
			return nil, errors.New("want a whole number, such as 10")
		}
		return T(n), nil
	}
}

// mapper is kong's mapper of a flag whose values check reads: it sets the
// field, or appends to it for a list (a list from a variable comes as
// []any, one element each).
func mapper(check Check) kong.MapperFunc {
	return func(ctx *kong.DecodeContext, target reflect.Value) error {
		name := ctx.Value.Name
		t, _ := ctx.Scan.PopValue("value")
		if t.IsEOL() {
			return &refusal{flag: name, missing: true}
		}
		values, ok := t.Value.([]any)
		if !ok {
			values = []any{t.Value}
		}
		for _, v := range values {
			s := fmt.Sprint(v)
			got, err := check(s)
			if enum := ctx.Value.EnumSlice(); err == nil && ctx.Value.Enum != "" && !slices.Contains(enum, s) {
				err = fmt.Errorf("want %s or %s", strings.Join(enum[:len(enum)-1], ", "), enum[len(enum)-1])
			}
			if err != nil {
				return &refusal{flag: name, value: s, why: err.Error()}
			}
			if target.Kind() != reflect.Slice {
				target.Set(reflect.ValueOf(got).Convert(target.Type()))
			} else if got != "" {
				target.Set(reflect.Append(target, reflect.ValueOf(got).Convert(target.Type().Elem())))
			}
		}
		return nil
	}
}

// boolMapper reads a boolean flag: --name alone is true, --name=false
// false.
type boolMapper struct{}

func (boolMapper) IsBool() bool { return true }

func (boolMapper) Decode(ctx *kong.DecodeContext, target reflect.Value) error {
	if ctx.Scan.Peek().Type != kong.FlagValueToken {
		target.SetBool(true)
		return nil
	}
	s := fmt.Sprint(ctx.Scan.Pop().Value)
	b, err := strconv.ParseBool(s)
	if err != nil {
		return &refusal{flag: ctx.Value.Name, value: s, why: "want true or false (also 1 or 0)"}
	}
	target.SetBool(b)
	return nil
}

// A Line is one flag as help shows it: --name PLACEHOLDER, its help, its
// default ("" for none) and its variable ("" for none).
type Line struct{ Flag, Help, Default, Env string }

// Lines returns the flags in group (nil: all), by name, as help shows
// them; a flag's group is its group tag, "" for none.
func (p *Parser) Lines(group func(name, group string) bool) []Line {
	var out []Line
	for _, f := range p.flags {
		title := ""
		if f.Group != nil {
			title = f.Group.Key
		}
		if group != nil && !group(f.Name, title) {
			continue
		}
		arg := "--" + f.Name
		if !f.IsBool() {
			arg += " " + cmp.Or(f.PlaceHolder, strings.ToUpper(strings.TrimPrefix(f.Target.Type().String(), "time.")))
		}
		d := f.Default
		switch {
		case d == "false", d == "0", d == "0s", strings.Contains(f.Help, "(default"):
			d = ""
		}
		out = append(out, Line{arg, f.Help, d, p.env[f.Name]})
	}
	return out
}

// PrintFlags writes lines in GNU style, --name VALUE, with their help,
// default and variable.
func PrintFlags(w io.Writer, lines []Line) {
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n      %s", l.Flag, l.Help)
		if l.Default != "" {
			fmt.Fprintf(w, " (default %s)", l.Default)
		}
		if l.Env != "" {
			fmt.Fprintf(w, " [$%s]", l.Env)
		}
		fmt.Fprintln(w)
	}
}

// MarkdownTable renders the flags as a README's table: flag, environment
// variable, default, meaning, and --help last, as help writes them. A
// test compares it with the README, so the two never disagree.
func (p *Parser) MarkdownTable() string {
	var b strings.Builder
	b.WriteString("| flag | environment | default | meaning |\n|---|---|---|---|\n")
	quote := func(s string) string {
		if s == "" {
			return ""
		}
		return "`" + s + "`"
	}
	for _, l := range p.Lines(nil) {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", l.Flag, quote(l.Env), quote(l.Default), strings.ReplaceAll(l.Help, "|", `\|`))
	}
	b.WriteString("| `--help` |  |  | show this help |\n")
	return b.String()
}

// Reports are the report flags of a run: the suite's, the HAR check's and
// the proxy's. ${reports_for} and ${reports_at} say, in a command's help,
// whose reports they are and when they are written; ${reports_of} what
// the coverage counts.
type Reports struct {
	JUnit       string  `name:"junit-report" env:"JUNIT_REPORT" placeholder:"FILE" help:"${reports_for}write a JUnit XML report to FILE${reports_at}"`
	Markdown    string  `name:"markdown-report" env:"MARKDOWN_REPORT" placeholder:"FILE" help:"${reports_for}write a Markdown summary to FILE${reports_at} (also appended to $$GITHUB_STEP_SUMMARY where it is set)"`
	HTML        string  `name:"html-report" env:"HTML_REPORT" placeholder:"FILE" help:"${reports_for}write the report as one self-contained HTML page to FILE${reports_at}"`
	MinCoverage float64 `name:"min-coverage" env:"MIN_COVERAGE" placeholder:"PERCENT" type:"percent" help:"${reports_for}fail (exit 1) when ${reports_of} exercises less than PERCENT of the documented (operation, status) pairs"`
}

// Names returns the names of the flags, as help orders them.
func (p *Parser) Names() []string {
	var names []string
	for _, f := range p.flags {
		names = append(names, f.Name)
	}
	return names
}

// Has reports whether the command has the flag.
func (p *Parser) Has(name string) bool { return p.lookup(name) != nil }

// Tagged returns the names of the flags that have the tag, such as
// notempty.
func (p *Parser) Tagged(tag string) []string {
	var names []string
	for _, f := range p.flags {
		if f.Tag.Has(tag) {
			names = append(names, f.Name)
		}
	}
	return names
}
