package main

// The compose files, brought up by a Compose client (Debian's
// docker-compose 1.29, or docker compose) through podman's Docker API
// (podman system service on a unix socket), with the images
// TestContainerImages built and, for compose.redis.yaml, Redis and nginx
// images made from the host's redis-server and nginx: no registry is
// reached. A file next to each compose file (-f, merged by Compose) gives
// the local images and the limits of container_test.go; nothing else of
// the compose files changes, with one exception: nginx.conf's resolver.
// Docker's DNS server listens on 127.0.0.11 in every container; podman's
// (aardvark-dns) on the network's gateway, so the proxy gets nginx.conf
// with that one address changed.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// service starts podman's Docker API on a unix socket in a directory of
// the test and returns DOCKER_HOST for it; the cleanup stops it.
func (p *podman) service(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "podman.sock")
	cmd := command(p.ctx, p.bin, append(slices.Clone(p.global), "system", "service", "--time", "0", "unix://"+sock)...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	c := http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := c.Get("http://podman/_ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return "unix://" + sock
			}
		}
		select {
		case err := <-done:
			t.Fatalf("podman system service exited: %v\n%s", err, &log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("podman system service: no answer on %s after 30 s: %v\n%s", sock, err, &log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// containerComposeLimits is container_test.go's containerLimits, for each service.
const containerComposeLimits = `
    ulimits:
      nofile: {soft: 1024, hard: 1024}
      nproc: {soft: 1024, hard: 1024}`

// compose brings docker/file up with the mock's image, checks that the
// list answers on MOCK_PORT, and takes it down.
func (p *podman) compose(t *testing.T, file, mockImage string) {
	argv := composeCommand()
	if argv == nil {
		missing(t, podmanRequire, "neither docker compose nor docker-compose is installed (apt-get install docker-compose): docker/"+file+" is not run")
	}
	redis := file == "compose.redis.yaml"
	if redis && !p.netavark {
		missing(t, podmanRequire, "netavark and aardvark-dns are not installed (apt-get install netavark aardvark-dns): without podman's DNS server the replicas cannot find Redis by name; docker/"+file+" is not run")
	}
	dir := t.TempDir()
	project := strings.ReplaceAll(p.name(strings.TrimSuffix(file, ".yaml")), "-", "")
	project = strings.ReplaceAll(project, ".", "")
	p.projects = append(p.projects, project)
	port := containerFreePort(t)
	host := p.service(t)
	override := filepath.Join(dir, "local.yaml")
	var images strings.Builder
	var nginxConf string
	if !redis {
		fmt.Fprintf(&images, "services:\n  inventory-mock:\n    image: %s%s\n", mockImage, containerComposeLimits)
	} else {
		nginxConf = filepath.Join(dir, "nginx.conf")
		fmt.Fprintf(&images, "services:\n  redis:\n    image: %s%s\n", p.redisImage(t), containerComposeLimits)
		for _, m := range []string{"mock-a", "mock-b"} {
			fmt.Fprintf(&images, "  %s:\n    image: %s%s\n", m, mockImage, containerComposeLimits)
		}
		fmt.Fprintf(&images, "  proxy:\n    image: %s%s\n    volumes:\n      - %s:/etc/nginx/conf.d/default.conf:ro\n", p.nginxImage(t), containerComposeLimits, nginxConf)
		// A placeholder until the network, and its DNS server, exist.
		if err := os.WriteFile(nginxConf, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(override, []byte(images.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		for _, prefix := range []string{"INVENTORY_MOCK_", "VERSION=", "DOCKER_", "COMPOSE_", "MOCK_PORT="} {
			if strings.HasPrefix(kv, prefix) {
				return true
			}
		}
		return false
	})
	env = append(env, "DOCKER_HOST="+host, fmt.Sprintf("MOCK_PORT=%d", port))
	run := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(p.ctx, 3*time.Minute)
		defer cancel()
		cmd := command(ctx, argv[0], append(argv[1:], append([]string{"-p", project,
			"-f", filepath.Join(root, "docker", file), "-f", override}, args...)...)...)
		cmd.Env = env
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", strings.Join(argv, " "), strings.Join(args, " "), err, out)
		}
		t.Logf("%s %s: %v", filepath.Base(argv[0]), strings.Join(args, " "), time.Since(start).Round(10*time.Millisecond))
	}
	down := false
	t.Cleanup(func() {
		if down {
			return
		}
		// What the test left up after a failure: its logs, then down
		// (podman.cleanup removes what is left).
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		for _, args := range [][]string{{"logs", "--no-color", "--tail", "30"}, {"down", "-v", "-t", "5"}} {
			cmd := command(ctx, argv[0], append(argv[1:], append([]string{"-p", project, "-f", filepath.Join(root, "docker", file), "-f", override}, args...)...)...)
			cmd.Env = env
			out, _ := cmd.CombinedOutput()
			if args[0] == "logs" {
				t.Logf("%s logs:\n%s", filepath.Base(argv[0]), out)
			}
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if !redis {
		run("up", "-d", "--no-build")
		containerInventory(t, containerWaitList(t, base, 30*time.Second))
		ctr := p.composeContainer(t, project, "inventory-mock")
		if ro := strings.TrimSpace(p.must(t, 30*time.Second, "inspect", "--format", "{{.HostConfig.ReadonlyRootfs}}", ctr)); ro != "true" {
			t.Errorf("read_only: the container's root is read-only: %s", ro)
		}
	} else {
		// Redis first: the replicas wait for it to be healthy, and podman
		// runs no health checks by itself here (no systemd).
		run("up", "-d", "--no-build", "redis")
		p.waitHealthy(t, p.composeContainer(t, project, "redis"), 30*time.Second)
		gateway := strings.TrimSpace(p.must(t, 30*time.Second, "network", "inspect", "--format", "{{range .Subnets}}{{.Gateway}} {{end}}", project+"_default"))
		if net.ParseIP(gateway) == nil {
			t.Fatalf("network %s_default: gateway %q", project, gateway)
		}
		conf, err := os.ReadFile(filepath.Join(root, "docker/nginx.conf"))
		if err != nil {
			t.Fatal(err)
		}
		const docker = "\nresolver 127.0.0.11 "
		if strings.Count(string(conf), docker) != 1 {
			t.Fatalf("docker/nginx.conf has no line %q to point at podman's DNS server", strings.TrimSpace(docker))
		}
		if err := os.WriteFile(nginxConf, []byte(strings.Replace(string(conf), docker, "\nresolver "+gateway+" ", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		run("up", "-d", "--no-build")
		// nginx answers 502 until a replica is up.
		containerInventory(t, containerWaitList(t, base, time.Minute))
		p.sharedThroughProxy(t, base, project)
	}
	run("down", "-v", "-t", "10")
	down = true
}

// sharedThroughProxy writes through nginx and reads the write back through
// it, 20 times and until both replicas have served a list (each logs its
// requests), for up to 20 s: every read sees the write, kept in Redis. nginx keeps its DNS
// answer for 5 s (valid=5s): one got before the second replica joined the
// network sends every request to the first until then.
func (p *podman) sharedThroughProxy(t *testing.T, base, project string) {
	t.Helper()
	const quantity = 4242
	req, _ := http.NewRequest(http.MethodPatch, base+"/v1/inventory/3", strings.NewReader(fmt.Sprintf(`{"quantity": %d}`, quantity)))
	req.Header.Set("Authorization", "Bearer "+containerDevKey)
	req.Header.Set("Content-Type", "application/json")
	if code, body, err := containerDo(req); err != nil || code != http.StatusOK {
		t.Fatalf("PATCH /v1/inventory/3 through nginx: %d, %v\n%s", code, err, body)
	}
	// lists returns how many lists each replica logged.
	lists := func() map[string]int {
		n := map[string]int{}
		for _, m := range []string{"mock-a", "mock-b"} {
			// The mock logs to its standard error, which podman logs writes to its own.
			logs, err := command(p.ctx, p.bin, append(slices.Clone(p.global), "logs", p.composeContainer(t, project, m))...).CombinedOutput()
			if err != nil {
				t.Fatalf("podman logs: %v\n%s", err, logs)
			}
			n[m] = bytes.Count(logs, []byte(`"path":"/v1/inventory"`))
		}
		return n
	}
	start := time.Now()
	for reads := 0; ; {
		for i := 0; i < 5; i++ {
			code, body, err := containerGet(base + "/v1/inventory")
			if err != nil || code != http.StatusOK {
				t.Fatalf("GET /v1/inventory through nginx: %d, %v\n%s", code, err, body)
			}
			reads++
			if q := containerInventory(t, body)[3]; q != quantity {
				t.Fatalf("read %d through nginx: pet 3 has quantity %d; want %d, written through one of the replicas", reads, q, quantity)
			}
		}
		n := lists()
		if reads >= 20 && n["mock-a"] > 0 && n["mock-b"] > 0 {
			t.Logf("%d reads through nginx in %v saw the write; the replicas served %d and %d lists", reads, time.Since(start).Round(10*time.Millisecond), n["mock-a"], n["mock-b"])
			return
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("after %d reads through nginx in 20 s, the replicas served %d and %d lists: nginx does not spread them", reads, n["mock-a"], n["mock-b"])
		}
		if reads >= 20 {
			time.Sleep(500 * time.Millisecond)
		}
	}
}

// composeContainer returns the ID of a compose project's service's container.
func (p *podman) composeContainer(t *testing.T, project, service string) string {
	t.Helper()
	ids := strings.Fields(p.must(t, 30*time.Second, "ps", "-aq", "--filter", "label=com.docker.compose.project="+project,
		"--filter", "label=com.docker.compose.service="+service))
	if len(ids) != 1 {
		t.Fatalf("project %s, service %s: containers %q; want one", project, service, ids)
	}
	return ids[0]
}

// waitHealthy runs a container's health check until it passes, for up to
// limit.
func (p *podman) waitHealthy(t *testing.T, ctr string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		_, err := p.cmd(ctx, nil, "healthcheck", "run", ctr)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not healthy after %v: %v", limit, err)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// redisImage makes the stand-in for redis:7-alpine from the host's
// redis-server and redis-cli (the health check's), with their libraries.
func (p *podman) redisImage(t *testing.T) string {
	t.Helper()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	if err1 != nil || err2 != nil {
		missing(t, "INVENTORY_REQUIRE_REDIS", "redis-server or redis-cli is not installed (apt-get install redis-server): no local Redis image")
	}
	r := newContainerRootfs(t)
	// Debian's redis-server is a link to redis-check-rdb, which acts by
	// the name it is run under: the file goes in under redis-server's name.
	r.hostBinary("/usr/bin/redis-server", server)
	r.hostBinary("/usr/bin/redis-cli", cli)
	r.dir("/data", 0o755, 0)
	r.dir("/tmp", 0o1777, 0)
	return p.importAs(t, r, "redis", "ENV=PATH=/usr/local/bin:/usr/bin:/bin", "WORKDIR=/data", `CMD=["redis-server"]`)
}

// nginxImage makes the stand-in for nginx:1.27-alpine from the host's
// nginx (Debian's paths), with the official image's layout: conf.d/*.conf
// included in the http block, logs to the container's output.
func (p *podman) nginxImage(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		missing(t, "INVENTORY_REQUIRE_NGINX", "nginx is not installed (apt-get install nginx-light): no local nginx image")
	}
	r := newContainerRootfs(t)
	r.hostBinary("/usr/sbin/nginx", bin)
	r.passwd()
	for _, d := range []string{"/etc/nginx/conf.d", "/var/log/nginx", "/var/lib/nginx", "/var/lock", "/run"} {
		r.dir(d, 0o755, 0)
	}
	r.dir("/tmp", 0o1777, 0)
	r.file("/etc/nginx/nginx.conf", 0o644, []byte(`daemon off;
user nobody nogroup;
worker_processes 1;
error_log stderr notice;
pid /run/nginx.pid;
events { worker_connections 1024; }
http {
    access_log /dev/stdout;
    include /etc/nginx/conf.d/*.conf;
}
`))
	return p.importAs(t, r, "nginx", "ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", `CMD=["nginx"]`)
}
