package chromiumtest

import (
	"os/exec"
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	installed := func(have ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, h := range have {
				if h == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	env := func(kv ...string) func(string) string {
		return func(name string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == name {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	tests := []struct {
		name     string
		lookPath func(string) (string, error)
		getenv   func(string) string
		path     string
		required bool
		message  string // in the error; "" for none
	}{
		{"chromium", installed("chromium", "google-chrome"), env(), "/usr/bin/chromium", false, ""},
		{"chrome only", installed("google-chrome"), env(RequireEnv, "1"), "/usr/bin/google-chrome", false, ""},
		{"none: skip", installed(), env(), "", false, "apt-get install chromium"},
		{"none, CI=false: skip", installed(), env("CI", "false"), "", false, "no chromium"},
		{"none, required: fail", installed(), env(RequireEnv, "1"), "", true, "$INVENTORY_REQUIRE_CHROMIUM is set"},
		{"none, CI=true: fail", installed(), env("CI", "true"), "", true, "$CI is true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, required, err := find(tt.lookPath, tt.getenv)
			if path != tt.path || required != tt.required || (err == nil) != (tt.message == "") ||
				(err != nil && !strings.Contains(err.Error(), tt.message)) {
				t.Errorf("find = %q, %v, %v; want %q, %v, an error with %q", path, required, err, tt.path, tt.required, tt.message)
			}
		})
	}
}
