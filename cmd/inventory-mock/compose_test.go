package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The compose files and nginx's configuration are checked by the tools
// that read them, where they are installed: nginx -t (Debian's nginx,
// apt-get install nginx-light) and docker compose config, or Compose v1's
// docker-compose config (apt-get install docker-compose), neither of which
// needs a Docker engine. Where a tool is missing the check is skipped,
// saying so.

// TestNginxConf runs nginx -t on docker/nginx.conf, included in the http
// block as the nginx image includes conf.d/default.conf.
func TestNginxConf(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		missing(t, "INVENTORY_REQUIRE_NGINX", "nginx is not installed (apt-get install nginx-light); docker/nginx.conf is not checked")
	}
	conf, err := filepath.Abs("../../docker/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	main := filepath.Join(dir, "nginx.conf")
	var temps strings.Builder
	for _, name := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		temps.WriteString("  " + name + "_temp_path " + filepath.Join(dir, name) + ";\n")
	}
	wrapper := "pid " + filepath.Join(dir, "nginx.pid") + ";\nerror_log " + filepath.Join(dir, "error.log") + ";\nevents {}\nhttp {\n  access_log off;\n" + temps.String() + "  include " + conf + ";\n}\n"
	if err := os.WriteFile(main, []byte(wrapper), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(nginx, "-t", "-p", dir, "-c", main, "-e", filepath.Join(dir, "error.log")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Errorf("nginx -t on docker/nginx.conf: %v\n%s", err, out)
	}
}

// TestComposeFiles runs docker compose config on the compose files: each
// is valid for Compose, and in compose.redis.yaml both replicas carry the
// alias nginx.conf sends requests to, and run on the Redis service.
func TestComposeFiles(t *testing.T) {
	compose := composeCommand()
	if compose == nil {
		missing(t, "INVENTORY_REQUIRE_COMPOSE", "neither docker compose nor docker-compose is installed (apt-get install docker-compose); the compose files are not checked")
	}
	for _, file := range []string{"compose.yaml", "compose.redis.yaml"} {
		cmd := exec.Command(compose[0], append(compose[1:], "-f", filepath.Join("../../docker", file), "config")...)
		cmd.Env = append(os.Environ(), "INVENTORY_MOCK_API_KEYS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s config -f docker/%s: %v\n%s", strings.Join(compose, " "), file, err, out)
			continue
		}
		if file != "compose.redis.yaml" {
			continue
		}
		for _, replica := range []string{"mock-a", "mock-b"} {
			svc := service(string(out), replica)
			if !strings.Contains(svc, "- mock\n") || !strings.Contains(svc, "INVENTORY_MOCK_STORE: redis://redis:6379/0") {
				t.Errorf("docker/%s: service %s lacks the alias mock or the redis store:\n%s", file, replica, svc)
			}
		}
	}
	nginx, err := os.ReadFile("../../docker/nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(nginx), "set $mock http://mock:8080;") || !strings.Contains(string(nginx), "proxy_pass $mock;") {
		t.Error("docker/nginx.conf does not send requests to the alias mock through a variable (resolved at run time)")
	}
}

// composeCommand returns the Compose command installed: docker compose
// (v2), else docker-compose (v1); nil if neither.
func composeCommand() []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	return nil
}

// service returns the lines of one service in docker compose config's
// output.
func service(config, name string) string {
	_, rest, ok := strings.Cut(config, "\n  "+name+":\n")
	if !ok {
		return ""
	}
	var b strings.Builder
	for _, line := range strings.SplitAfter(rest, "\n") {
		if !strings.HasPrefix(line, "    ") {
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// missing skips a test whose tool is not installed, or fails it where the
// variable named require is set, as .ci/run sets it: CI installs the tool.
func missing(t *testing.T, require, why string) {
	t.Helper()
	if os.Getenv(require) != "" {
		t.Fatalf("%s, and %s is set", why, require)
	}
	t.Skip(why)
}
