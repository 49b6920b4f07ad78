package main

// The images of docker/Dockerfile, built and run with podman, on a machine
// that reaches no image registry. The static binaries are compiled on the
// host, once, by the Dockerfile's own go build command (the compile
// TestDockerfileBuild makes too, so the build cache serves both), and the
// images are built from them with BINARIES=prebuilt on a local runtime
// base this test makes (podman import of a root file system it writes),
// passed as RUNTIME_IMAGE, the build argument whose default is distroless.
// Where podman is missing the test skips, saying so; where
// INVENTORY_REQUIRE_PODMAN is set, as .ci/run sets it, it fails.
//
// podman runs here as root with runc and cgroupfs: Debian's default runtime,
// crun, fails on this machine's hybrid cgroups ("cgroups in hybrid mode not
// supported"), and podman's default open-files and processes limits are
// refused ("setrlimit RLIMIT_NOFILE: Operation not permitted"), so every
// container gets --ulimit nofile=1024:1024 --ulimit nproc=1024:1024.
//
// Nothing the test starts outlives it: every podman command runs under a
// context that ends before go test's deadline (-timeout), leaving the
// cleanup time to remove what the run made; a command that is cancelled
// gets SIGTERM first, so podman stops its build or container itself, and
// dies with the test process should that be killed.

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// podmanRequire, set, turns the test's skips into failures.
const podmanRequire = "INVENTORY_REQUIRE_PODMAN"

// containerDevKey is the key the mock accepts when it is given none.
const containerDevKey = "inventory-dev-key"

// podman runs podman with the global flags this machine needs, and
// removes at cleanup everything the test made: containers and images carry
// the label inventory-test=<id> (the bases have it, and images and
// containers inherit it), compose projects their own label.
type podman struct {
	t        *testing.T
	ctx      context.Context // ends before the test's deadline: every podman command runs under it
	bin      string
	global   []string // --runtime runc --cgroup-manager cgroupfs [--network-backend netavark]
	id       string   // unique to the run: names, tags and the label
	netavark bool     // netavark and aardvark-dns are installed: containers find each other by name
	projects []string // compose projects to tear down
}

// containerLimits are the resource limits every container gets (see the top).
var containerLimits = []string{"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024"}

// newPodman finds podman, or skips (fails under INVENTORY_REQUIRE_PODMAN),
// and registers the cleanup.
func newPodman(t *testing.T) *podman {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs container images")
	}
	bin, err := exec.LookPath("podman")
	if err != nil {
		missing(t, podmanRequire, "podman is not installed (apt-get install podman runc); docker/Dockerfile's images are not built")
	}
	if os.Geteuid() != 0 {
		missing(t, podmanRequire, "not root: the test runs podman as root (rootless podman needs subordinate IDs set up); docker/Dockerfile's images are not built")
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	p := &podman{t: t, ctx: beforeDeadline(t), bin: bin, id: "inventory-test-" + hex.EncodeToString(b)}
	p.global = []string{"--runtime", "runc", "--cgroup-manager", "cgroupfs"}
	// Netavark's DNS server, aardvark-dns, answers a container's name and
	// aliases on its network (CNI does it only with the dnsname plugin,
	// which Debian does not package): compose.redis.yaml needs it.
	p.netavark = podmanHelper("netavark") && podmanHelper("aardvark-dns")
	if p.netavark {
		p.global = append(p.global, "--network-backend", "netavark")
	}
	if out, err := p.cmd(p.ctx, nil, "version", "--format", "{{.Client.Version}}"); err != nil {
		t.Fatalf("podman does not run: %v", err)
	} else {
		t.Logf("podman %s, run %s", strings.TrimSpace(out), p.id)
	}
	t.Cleanup(p.cleanup)
	return p
}

// podmanHelper reports whether one of podman's helper binaries is installed
// where podman looks for them by default.
func podmanHelper(name string) bool {
	for _, dir := range []string{"/usr/local/libexec/podman", "/usr/local/lib/podman", "/usr/libexec/podman", "/usr/lib/podman"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// cleanupTime is what the test keeps of its time for its cleanup: the
// podman commands stop this long before go test's deadline.
const cleanupTime = 2 * time.Minute

// beforeDeadline returns a context that ends when the test does, or
// cleanupTime before go test's deadline (-timeout), whichever comes first.
func beforeDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(context.Background(), d.Add(-cleanupTime))
	}
	t.Cleanup(cancel)
	return ctx
}

// command returns a command that ends with ctx: first SIGTERM, which
// podman answers by stopping its build or container and removing what it
// had made, then, 20 s on, SIGKILL. It also gets SIGTERM if the test
// process dies first (dieWithTest).
func command(ctx context.Context, name string, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 20 * time.Second
	dieWithTest(c)
	return c
}

// cmd runs podman with args, stdin from in, and returns its standard
// output; an error carries the standard error. It ends with ctx: one
// derived from p.ctx, except in the cleanup, which has time of its own.
func (p *podman) cmd(ctx context.Context, in []byte, args ...string) (string, error) {
	c := command(ctx, p.bin, append(slices.Clone(p.global), args...)...)
	if in != nil {
		c.Stdin = bytes.NewReader(in)
	}
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := c.Run(); err != nil {
		return stdout.String(), fmt.Errorf("podman %s: %w\n%s%s", strings.Join(args, " "), err, &stdout, &stderr)
	}
	return stdout.String(), nil
}

// must runs podman with a time limit and fails t on an error.
func (p *podman) must(t *testing.T, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, timeout)
	defer cancel()
	out, err := p.cmd(ctx, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// name returns a unique name for what the test makes.
func (p *podman) name(what string) string { return p.id + "-" + what }

// image returns the reference of a local image of the run.
func (p *podman) image(what string) string { return "localhost/" + p.name(what) + ":latest" }

// ids lists the IDs podman's list command (ps, images, network ls, ...)
// prints for args.
func (p *podman) ids(args ...string) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := p.cmd(ctx, nil, args...)
	if err != nil {
		p.t.Errorf("cleanup: %v", err)
	}
	return strings.Fields(out)
}

// cleanup removes the containers, compose networks and volumes, and images
// of the run, and fails the test if any image is left.
func (p *podman) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	label := "label=inventory-test=" + p.id
	// A container that restarts (restart: unless-stopped) may refuse its
	// first removal: try again.
	for try := 0; try < 3; try++ {
		ctrs := p.ids("ps", "-aq", "--filter", label)
		if len(ctrs) == 0 {
			break
		}
		if _, err := p.cmd(ctx, nil, append([]string{"rm", "-f", "-t", "0"}, ctrs...)...); err != nil && try == 2 {
			p.t.Errorf("cleanup: %v", err)
		}
	}
	if nets := p.ids("network", "ls", "-q", "--filter", label); len(nets) > 0 {
		if _, err := p.cmd(ctx, nil, append([]string{"network", "rm", "-f"}, nets...)...); err != nil {
			p.t.Errorf("cleanup: %v", err)
		}
	}
	for _, project := range p.projects {
		project := "label=com.docker.compose.project=" + project
		if nets := p.ids("network", "ls", "-q", "--filter", project); len(nets) > 0 {
			if _, err := p.cmd(ctx, nil, append([]string{"network", "rm", "-f"}, nets...)...); err != nil {
				p.t.Errorf("cleanup: %v", err)
			}
		}
		if vols := p.ids("volume", "ls", "-q", "--filter", project); len(vols) > 0 {
			if _, err := p.cmd(ctx, nil, append([]string{"volume", "rm", "-f"}, vols...)...); err != nil {
				p.t.Errorf("cleanup: %v", err)
			}
		}
	}
	// Every image of the run at once, intermediate build layers included:
	// podman removes children before their parents.
	if imgs := p.ids("images", "-aq", "--filter", label); len(imgs) > 0 {
		if _, err := p.cmd(ctx, nil, append([]string{"rmi", "-f"}, imgs...)...); err != nil {
			p.t.Errorf("cleanup: %v", err)
		}
	}
	if left := p.ids("images", "-aq", "--filter", label); len(left) > 0 {
		p.t.Errorf("cleanup: images left: %v", left)
	}
}

// A containerRootfs is a root file system written as a tar stream, for podman
// import. Parent directories are added as needed.
type containerRootfs struct {
	t    *testing.T
	buf  bytes.Buffer
	tw   *tar.Writer
	dirs map[string]bool
}

func newContainerRootfs(t *testing.T) *containerRootfs {
	r := &containerRootfs{t: t, dirs: map[string]bool{".": true, "/": true}}
	r.tw = tar.NewWriter(&r.buf)
	return r
}

func (r *containerRootfs) header(h *tar.Header) {
	r.t.Helper()
	h.Name = strings.TrimPrefix(h.Name, "/")
	if h.Typeflag == tar.TypeDir {
		h.Name += "/"
	}
	h.ModTime = time.Unix(0, 0)
	if err := r.tw.WriteHeader(h); err != nil {
		r.t.Fatal(err)
	}
}

// dir adds a directory and its missing parents (0755, root's).
func (r *containerRootfs) dir(name string, mode int64, uid int) {
	r.t.Helper()
	if r.dirs[name] {
		return
	}
	r.dir(path.Dir(name), 0o755, 0)
	r.dirs[name] = true
	r.header(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: mode, Uid: uid, Gid: uid})
}

func (r *containerRootfs) file(name string, mode int64, data []byte) {
	r.t.Helper()
	r.dir(path.Dir(name), 0o755, 0)
	r.header(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data))})
	if _, err := r.tw.Write(data); err != nil {
		r.t.Fatal(err)
	}
}

// hostFile adds the host's file src (symbolic links followed) as name.
func (r *containerRootfs) hostFile(name, src string) {
	r.t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		r.t.Fatal(err)
	}
	fi, err := os.Stat(src)
	if err != nil {
		r.t.Fatal(err)
	}
	r.file(name, int64(fi.Mode().Perm()), data)
}

// hostBinary adds the host's dynamically linked program src as name, with
// the shared libraries ldd lists, at their paths.
func (r *containerRootfs) hostBinary(name, src string) {
	r.t.Helper()
	r.hostFile(name, src)
	out, err := exec.Command("ldd", src).Output()
	if err != nil {
		r.t.Fatalf("ldd %s: %v", src, err)
	}
	for _, lib := range regexp.MustCompile(`(?m)(/\S+) \(0x`).FindAllStringSubmatch(string(out), -1) {
		if !r.dirs["lib:"+lib[1]] {
			r.dirs["lib:"+lib[1]] = true
			r.hostFile(lib[1], lib[1])
		}
	}
}

func (r *containerRootfs) symlink(name, target string) {
	r.t.Helper()
	r.dir(path.Dir(name), 0o755, 0)
	r.header(&tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777})
}

// passwd adds /etc/passwd and /etc/group with root, nobody and users.
func (r *containerRootfs) passwd(users ...string) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n"
	group := "root:x:0:\nnogroup:x:65534:\n"
	for _, u := range users {
		passwd += u + "\n"
		f := strings.Split(u, ":")
		group += f[0] + ":x:" + f[3] + ":\n"
	}
	r.file("/etc/passwd", 0o644, []byte(passwd))
	r.file("/etc/group", 0o644, []byte(group))
}

// importAs imports the root file system as a local image with the run's
// label and the given Dockerfile-style changes, such as ENV=K=V.
func (p *podman) importAs(t *testing.T, r *containerRootfs, what string, changes ...string) string {
	t.Helper()
	if err := r.tw.Close(); err != nil {
		t.Fatal(err)
	}
	ref := p.image(what)
	args := []string{"import", "--change", "LABEL=inventory-test=" + p.id}
	for _, c := range changes {
		args = append(args, "--change", c)
	}
	ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
	defer cancel()
	if _, err := p.cmd(ctx, r.buf.Bytes(), append(args, "-", ref)...); err != nil {
		t.Fatal(err)
	}
	return ref
}

// runtimeBase makes the stand-in for gcr.io/distroless/static-debian12:nonroot:
// its users (nonroot is 65532:65532, its home /home/nonroot), /tmp, the
// CA certificates and its environment; no shell, like distroless.
func (p *podman) runtimeBase() string {
	p.t.Helper()
	r := newContainerRootfs(p.t)
	r.passwd("nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin")
	r.dir("/tmp", 0o1777, 0)
	r.dir("/home/nonroot", 0o700, 65532)
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
		r.hostFile("/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs/ca-certificates.crt")
	}
	return p.importAs(p.t, r, "runtime-base",
		"ENV=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"ENV=SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt")
}

// buildImages compiles the two binaries on the host with the Dockerfile's
// go build command, stamped with version, and builds the Dockerfile's two
// targets from them (BINARIES=prebuilt, the binaries' directory as the
// build context) on the local runtime base. It returns the images of the
// mock and of the conformance suite. The build reads no network and
// compiles nothing: --layers=false keeps no intermediate image, and every
// image carries the run's label.
func (p *podman) buildImages(version, dir string) (mock, conformance string) {
	p.t.Helper()
	for _, bin := range []string{"inventory-mock", "inventory-conformance"} {
		start := time.Now()
		buildAsDockerfileIn(p.t, p.ctx, version, bin, dir)
		p.t.Logf("go build %s (static, -trimpath): %v", bin, time.Since(start).Round(100*time.Millisecond))
	}
	mock, conformance = p.buildFrom(dir, p.runtimeBase(), version)
	return mock, conformance
}

// buildFrom builds the Dockerfile's two targets from the binaries in dir
// on the runtime base and returns their images.
func (p *podman) buildFrom(dir, runtime, version string) (mock, conformance string) {
	p.t.Helper()
	dockerfile, err := filepath.Abs(filepath.Join(root, "docker/Dockerfile"))
	if err != nil {
		p.t.Fatal(err)
	}
	args := []string{
		"build", "--format", "docker", // OCI images drop HEALTHCHECK
		"--network", "none", "--layers=false", "--label", "inventory-test=" + p.id,
		"-f", dockerfile,
		"--build-arg", "BINARIES=prebuilt",
		"--build-arg", "RUNTIME_IMAGE=" + runtime,
		"--build-arg", "VERSION=" + version,
	}
	for _, target := range []string{"mock", "conformance"} {
		start := time.Now()
		p.must(p.t, 3*time.Minute, append(args, "--target", target, "-t", p.image(target), dir)...)
		p.t.Logf("podman build --target %s: %v", target, time.Since(start).Round(100*time.Millisecond))
	}
	return p.image("mock"), p.image("conformance")
}

// containerFreePort returns a loopback port nothing listens on now.
func containerFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// containerGet asks url with the development key and returns the status and body.
func containerGet(url string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+containerDevKey)
	return containerDo(req)
}

// containerDo sends req and returns the status and body.
func containerDo(req *http.Request) (int, []byte, error) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, err = b.ReadFrom(resp.Body)
	return resp.StatusCode, b.Bytes(), err
}

// containerWaitList asks for the list until it answers 200, for up to limit.
func containerWaitList(t *testing.T, base string, limit time.Duration) []byte {
	t.Helper()
	start := time.Now()
	deadline := start.Add(limit)
	for {
		code, body, err := containerGet(base + "/v1/inventory")
		if err == nil && code == http.StatusOK {
			t.Logf("the list answered %v after the start", time.Since(start).Round(10*time.Millisecond))
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s/v1/inventory: %d, %v after %v\n%s", base, code, err, limit, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// containerInventory decodes the list.
func containerInventory(t *testing.T, body []byte) map[int64]int64 {
	t.Helper()
	var items []struct{ PetID, Quantity int64 }
	if err := json.Unmarshal(body, &items); err != nil || len(items) == 0 {
		t.Fatalf("the list is no array of records: %v\n%s", err, body)
	}
	q := map[int64]int64{}
	for _, it := range items {
		q[it.PetID] = it.Quantity
	}
	return q
}

// runMock starts the mock's image as the test wants it: read-only root,
// the image's own user, on a free loopback port. It returns the
// container's name and the mock's address.
func (p *podman) runMock(image string) (name, base string) {
	p.t.Helper()
	name = p.name("mock")
	// A network of the run's own, not podman's default one: where podman
	// has run with CNI, CNI's bridge keeps the default network's subnet
	// (10.88.0.0/16), and netavark's default network on the same subnet
	// cannot be reached ("no route to host"). podman picks a free subnet
	// for a new network.
	network := p.name("net")
	p.must(p.t, time.Minute, "network", "create", "--label", "inventory-test="+p.id, network)
	for try := 0; ; try++ {
		port := containerFreePort(p.t)
		ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
		_, err := p.cmd(ctx, nil, append(append([]string{"run", "-d", "--name", name, "--label", "inventory-test=" + p.id,
			"--read-only", "--network", network}, containerLimits...), "-p", fmt.Sprintf("127.0.0.1:%d:8080", port), image)...)
		cancel()
		if err == nil {
			return name, fmt.Sprintf("http://127.0.0.1:%d", port)
		}
		// Another process took the port in between: once more.
		if try == 2 || !strings.Contains(err.Error(), "address already in use") {
			p.t.Fatal(err)
		}
		p.must(p.t, time.Minute, "rm", "-f", name)
	}
}

// TestContainerImages builds the Dockerfile's images with podman on local
// bases and runs them: the mock as a non-root user on a read-only root
// file system answers the list, passes its HEALTHCHECK, prints its
// version and stops on SIGTERM within seconds; the conformance suite's
// image prints its help and version and passes against the mock's
// container. Then each compose file is brought up and answers
// (container_compose_test.go).
func TestContainerImages(t *testing.T) {
	p := newPodman(t)
	start := time.Now()
	version := "container-test-" + strings.TrimPrefix(p.id, "inventory-test-")
	bins := t.TempDir()
	mockImage, confImage := p.buildImages(version, bins)
	t.Logf("bases and both images built in %v", time.Since(start).Round(100*time.Millisecond))

	name, base := p.runMock(mockImage)
	body := containerWaitList(t, base, 20*time.Second)

	t.Run("list", func(t *testing.T) {
		if q := containerInventory(t, body); len(q) < 10 {
			t.Errorf("the list has %d records", len(q))
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/inventory", nil)
		if code, body, err := containerDo(req); err != nil || code != http.StatusUnauthorized {
			t.Errorf("GET /v1/inventory without a key: %d, %v; want 401\n%s", code, err, body)
		}
	})

	t.Run("healthcheck", func(t *testing.T) {
		// podman schedules health checks with systemd timers, which this
		// machine lacks (it logs so): run the image's HEALTHCHECK here.
		p.must(t, 30*time.Second, "healthcheck", "run", name)
		if s := strings.TrimSpace(p.must(t, 30*time.Second, "inspect", "--format", "{{.State.Health.Status}}", name)); s != "healthy" {
			t.Errorf("health status %q; want healthy", s)
		}
	})

	t.Run("version", func(t *testing.T) {
		out := p.must(t, time.Minute, append(append([]string{"run", "--rm", "--network", "none", "--label", "inventory-test=" + p.id}, containerLimits...), mockImage, "--version")...)
		if want := "inventory-mock " + version + "\n"; out != want {
			t.Errorf("--version printed %q; want %q", out, want)
		}
	})

	t.Run("nonroot", func(t *testing.T) {
		var c struct {
			Config     struct{ User string }
			HostConfig struct{ ReadonlyRootfs bool }
			State      struct{ Pid int }
		}
		var list []json.RawMessage
		if err := json.Unmarshal([]byte(p.must(t, 30*time.Second, "inspect", name)), &list); err != nil || len(list) != 1 {
			t.Fatalf("podman inspect: %v", err)
		}
		if err := json.Unmarshal(list[0], &c); err != nil {
			t.Fatal(err)
		}
		if c.Config.User != "65532:65532" || !c.HostConfig.ReadonlyRootfs {
			t.Errorf("user %q, read-only root %v; want 65532:65532 (distroless's nonroot), true", c.Config.User, c.HostConfig.ReadonlyRootfs)
		}
		// The process itself, as the host's kernel sees it.
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.State.Pid))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"Uid", "Gid"} {
			m := regexp.MustCompile(`(?m)^` + id + `:\s+(.*)$`).FindStringSubmatch(string(status))
			if m == nil || strings.Join(strings.Fields(m[1]), " ") != "65532 65532 65532 65532" {
				t.Errorf("the mock's process: %s %q; want 65532 for real, effective, saved and file system", id, m)
			}
		}
	})

	t.Run("conformance", func(t *testing.T) {
		run := func(args ...string) (string, error) {
			ctx, cancel := context.WithTimeout(p.ctx, 3*time.Minute)
			defer cancel()
			return p.cmd(ctx, nil, append(append([]string{"run", "--rm", "--read-only", "--network", "host",
				"--name", p.name("conformance"), "--label", "inventory-test=" + p.id}, containerLimits...), append([]string{confImage}, args...)...)...)
		}
		if out, err := run("--version"); err != nil || out != "inventory-conformance "+version+"\n" {
			t.Errorf("--version: %q, %v", out, err)
		}
		if out, err := run("--help"); err != nil || !strings.HasPrefix(out, "Usage: inventory-conformance") {
			t.Errorf("--help: %v\n%s", err, out)
		}
		start := time.Now()
		if out, err := run("--base-url", base+"/v1", "--api-key", containerDevKey); err != nil {
			t.Errorf("the suite against the mock's container: %v\n%s", err, out)
		} else {
			t.Logf("the suite passed against the mock's container in %v", time.Since(start).Round(100*time.Millisecond))
		}
	})

	t.Run("sigterm", func(t *testing.T) {
		start := time.Now()
		p.must(t, time.Minute, "stop", "-t", "10", name) // SIGTERM; SIGKILL after 10 s
		took := time.Since(start)
		t.Logf("podman stop (SIGTERM): %v", took.Round(10*time.Millisecond))
		if took > 5*time.Second {
			t.Errorf("the mock took %v to stop on SIGTERM; want under 5 s", took)
		}
		if code := strings.TrimSpace(p.must(t, 30*time.Second, "inspect", "--format", "{{.State.ExitCode}}", name)); code != "0" {
			t.Errorf("exit status %s after SIGTERM; want 0 (137: killed after the timeout)", code)
		}
	})

	t.Run("without a registry", func(t *testing.T) { p.readme(t, bins) })
	t.Run("compose", func(t *testing.T) { p.compose(t, "compose.yaml", mockImage) })
	t.Run("compose-redis", func(t *testing.T) { p.compose(t, "compose.redis.yaml", mockImage) })
	t.Logf("total %v", time.Since(start).Round(100*time.Millisecond))
}

// readme runs the podman commands of docker/README.md's "Without a
// registry" on the binaries in bins (built as its go build line builds
// them): the images build on scratch, the mock's container answers, and
// the suite's container passes against it. Names, the port and the build
// context are the test's; every other argument is the README's.
func (p *podman) readme(t *testing.T, bins string) {
	b, err := os.ReadFile(filepath.Join(root, "docker/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "## Without a registry\n")
	_, block, _ := strings.Cut(section, "```sh\n")
	block, _, _ = strings.Cut(block, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, "podman ") {
			lines = append(lines, l)
		}
	}
	if len(lines) < 4 || !strings.Contains(block, "go build") {
		t.Fatalf("docker/README.md, Without a registry: no go build and podman build, run commands in its sh block:\n%s", block)
	}
	dockerfile, _ := filepath.Abs(filepath.Join(root, "docker/Dockerfile"))
	port := containerFreePort(t)
	images := map[string]string{"inventory-mock": p.image("readme-mock"), "inventory-conformance": p.image("readme-conformance")}
	for _, l := range lines {
		l = strings.ReplaceAll(l, "127.0.0.1:8080", fmt.Sprintf("127.0.0.1:%d", port))
		args := strings.Fields(strings.TrimPrefix(l, "podman "))
		for i, a := range args {
			switch {
			case i > 0 && (args[i-1] == "--name" || args[0] == "rm" && !strings.HasPrefix(a, "-")):
				args[i] = p.name("readme-" + a) // a container's name
			case images[a] != "":
				args[i] = images[a]
			case a == "docker/Dockerfile":
				args[i] = dockerfile
			case a == "bin/":
				args[i] = bins
			}
		}
		switch args[0] {
		case "build":
			args = append([]string{"build", "--format", "docker", "--network", "none", "--layers=false", "--label", "inventory-test=" + p.id}, args[1:]...)
			p.must(t, 3*time.Minute, args...)
		case "run":
			if !strings.Contains(l, strings.Join(containerLimits, " ")) {
				t.Errorf("%s: no %s, which podman needs here", l, strings.Join(containerLimits, " "))
			}
			args = append([]string{"run", "--label", "inventory-test=" + p.id}, args[1:]...)
			if slices.Contains(args, "-d") && !slices.Contains(args, "--network") {
				// The run's own network, as runMock's: podman's default
				// one may share CNI's subnet here (see runMock).
				args = append([]string{"run", "--network", p.name("net")}, args[1:]...)
			}
			out := p.must(t, 3*time.Minute, args...)
			if slices.Contains(args, "-d") {
				containerInventory(t, containerWaitList(t, fmt.Sprintf("http://127.0.0.1:%d", port), 20*time.Second))
			} else if !strings.Contains(out, "0 failed") {
				t.Errorf("%s: the suite did not pass:\n%s", l, out)
			}
		case "rm":
			p.must(t, time.Minute, args...)
		default:
			t.Errorf("%s: a podman command the test does not know", l)
		}
	}
}
