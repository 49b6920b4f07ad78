//go:build unix

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// root is the repository's root, from this directory.
const root = "../../.."

// missing skips a test whose tool is not installed, or fails it where the
// variable named require is set, as .ci/run sets it.
func missing(t *testing.T, require, why string) {
	t.Helper()
	if os.Getenv(require) != "" {
		t.Fatalf("%s, and %s is set", why, require)
	}
	t.Skip(why)
}

// testDist makes a release's dist directory for this machine's platform
// alone, as goreleaser would lay it out: metadata.json and the mock's
// archive, its binary built with go build at version.
func testDist(t *testing.T, version string) (string, platform) {
	t.Helper()
	i := slices.IndexFunc(platforms, func(p platform) bool { return p.goos == runtime.GOOS && p.goarch == runtime.GOARCH })
	if i < 0 {
		t.Skipf("no release build for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	p := platforms[i]
	dist := t.TempDir()
	bin := filepath.Join(t.TempDir(), p.exe())
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", bin, "./cmd/inventory-mock")
	build.Dir, build.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, mode := range map[string]int64{p.exe(): 0o755, "LICENSE": 0o644, "README.md": 0o644} {
		src := filepath.Join(root, name)
		if name == p.exe() {
			src = bin
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	if err := os.WriteFile(filepath.Join(dist, p.archive(version)), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	meta, _ := json.Marshal(map[string]string{"project_name": "inventory-kit", "version": version})
	if err := os.WriteFile(filepath.Join(dist, "metadata.json"), meta, 0o644); err != nil {
		t.Fatal(err)
	}
	return dist, p
}

// TestNpmPackage builds the npm packages, packs each with npm pack,
// installs the tarballs offline into a new project, and runs the mock
// through npx: --version, then serving a request on a free port, then
// stopping on SIGTERM. It packages the release in $INVENTORY_RELEASE_DIST
// (all six platforms) where set, else this machine's platform from go build.
func TestNpmPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the mock and installs it with npm")
	}
	for _, tool := range []string{"node", "npm", "npx"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, "INVENTORY_REQUIRE_NODE", tool+" is not installed")
		}
	}
	dist, ps := os.Getenv("INVENTORY_RELEASE_DIST"), platforms
	if dist == "" {
		var p platform
		dist, p = testDist(t, "0.0.0-npmtest")
		ps = []platform{p}
	}
	version, err := releaseVersion(dist)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := build(dist, filepath.Join(t.TempDir(), "npm"), ps)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != len(ps)+1 {
		t.Fatalf("%d packages; want %d platforms' and the main one", len(dirs), len(ps))
	}

	// npm with a cache of its own, offline: nothing comes from a registry.
	npmEnv := append(os.Environ(), "npm_config_cache="+t.TempDir(), "npm_config_offline=true",
		"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
	npm := func(dir string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir, cmd.Env = dir, npmEnv
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", strings.Join(args, " "), err, &stdout, &stderr)
		}
		return stdout.String()
	}
	tarballs := t.TempDir()
	var packed []string
	for _, d := range dirs {
		var files []struct {
			Filename string
			Files    []struct {
				Path string
				Mode int
			}
		}
		if err := json.Unmarshal([]byte(npm(d, "npm", "pack", "--json", "--pack-destination", tarballs)), &files); err != nil || len(files) != 1 {
			t.Fatalf("npm pack --json in %s: %v", d, err)
		}
		var paths []string
		for _, f := range files[0].Files {
			paths = append(paths, f.Path)
			if strings.HasPrefix(f.Path, "bin/") && f.Mode&0o111 == 0 {
				t.Errorf("%s: %s is not executable in the tarball (mode %o)", files[0].Filename, f.Path, f.Mode)
			}
		}
		slices.Sort(paths)
		bin := "bin/inventory-mock.js"
		if d != dirs[len(dirs)-1] {
			bin = "bin/" + ps[slices.Index(dirs, d)].exe()
		}
		if want := []string{"LICENSE", "README.md", bin, "package.json"}; !slices.Equal(paths, want) {
			t.Errorf("%s holds %v; want %v", files[0].Filename, paths, want)
		}
		packed = append(packed, filepath.Join(tarballs, files[0].Filename))
	}

	// A frontend's project installs the main package and this machine's
	// platform package from their tarballs (from the registry, npm would
	// fetch the platform package itself); the other platforms' optional
	// dependencies it cannot fetch offline, and skips.
	i := slices.IndexFunc(ps, func(p platform) bool { return p.goos == runtime.GOOS && p.goarch == runtime.GOARCH })
	if i < 0 {
		t.Skipf("the release has no build for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, "package.json"), []byte(`{"name": "frontend", "private": true}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	npm(project, "npm", "install", "--offline", packed[len(packed)-1], packed[i])
	if out := npm(project, "npx", "--offline", "inventory-mock", "--version"); out != "inventory-mock "+version+"\n" {
		t.Errorf("npx inventory-mock --version = %q; want %q", out, "inventory-mock "+version+"\n")
	}

	// The mock on a free port, through npx and the launcher, in a process
	// group of its own; SIGTERM to the group stops it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.Command("npx", "--offline", "inventory-mock", "--addr", "127.0.0.1:"+port)
	cmd.Dir, cmd.Env = project, npmEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}()
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("npx inventory-mock ended before serving: %v\n%s", err, &logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("npx inventory-mock did not serve in 60 s:\n%s", &logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	req, _ := http.NewRequest("GET", base+"/v1/inventory", nil)
	req.Header.Set("Authorization", "Bearer inventory-dev-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var pets []map[string]any
	err = json.NewDecoder(resp.Body).Decode(&pets)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil || len(pets) == 0 {
		t.Errorf("GET /v1/inventory = %d, %d pets, %v; want 200 and the fixtures' pets", resp.StatusCode, len(pets), err)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Errorf("npx inventory-mock still ran 30 s after SIGTERM:\n%s", &logs)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Errorf("the mock still answers after SIGTERM")
	}
}
