package main

import (
	"runtime/debug"
	"strings"
)

// version is set at build time with -ldflags "-X main.version=...";
// otherwise it comes from the build information.
var version = ""

// versionString says which build this is: the stamped version, the
// module's version, or the VCS revision and time the binary was built
// from ("+dirty" for uncommitted changes).
func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		return "unknown (built without version control information; stamp with -ldflags \"-X main.version=...\")"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var b strings.Builder
	b.WriteString(settings["vcs"] + " " + rev)
	if settings["vcs.modified"] == "true" {
		b.WriteString("+dirty")
	}
	if t := settings["vcs.time"]; t != "" {
		b.WriteString(" (" + t + ")")
	}
	b.WriteString(", " + bi.GoVersion)
	return b.String()
}
