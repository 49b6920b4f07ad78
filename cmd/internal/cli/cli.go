// Package cli holds what the kit's commands share on their command lines,
// so that all of them behave alike: the version stamped at build time,
// help in GNU style on standard output, flags read from the environment,
// and one line for a bad flag.
package cli

import (
	"fmt"
	"runtime/debug"
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
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	rev, modified := vcs["vcs.revision"], ""
	if vcs["vcs.modified"] == "true" {
		modified = ", with uncommitted changes"
	}
	if rev == "" {
		return unstamped
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("commit %s (%s%s)", rev, vcs["vcs.time"], modified)
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
