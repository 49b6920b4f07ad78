package main

// What can be checked of docker/ without a Docker engine: the Dockerfile's
// instructions, its build command run outside Docker, what .dockerignore
// keeps out of (and in) the build context, the compose file as Compose
// reads it (where a Compose client is installed), and .gitignore.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/go-yaml"
)

// root is the checkout's root, seen from this package's directory.
const root = "../.."

// An instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, ...
	args string
}

// dockerfile reads docker/Dockerfile's instructions.
func dockerfile(t *testing.T) []instruction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker/Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || trimmed == "" && cur.Len() == 0 {
			continue
		}
		if more, ok := strings.CutSuffix(trimmed, `\`); ok {
			cur.WriteString(more + " ")
			continue
		}
		cur.WriteString(trimmed)
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " ")})
		cur.Reset()
	}
	return out
}

// goModVersion returns the Go release go.mod names.
func goModVersion(t *testing.T) string {
	t.Helper()
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mod), "\n") {
		if v, ok := strings.CutPrefix(line, "go "); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("go.mod names no Go release")
	return ""
}

// TestDockerfile checks the Dockerfile's instructions: the Go image is the
// release go.mod names (official Go images set GOTOOLCHAIN=local and refuse
// a module that needs a newer one), the base images are build arguments
// (CI passes local ones: container_test.go) defaulting to golang and to
// distroless nonroot, the build stamps --version from a build argument,
// both images run as distroless's nonroot user by number, the conformance
// suite has its own target and the mock is the default (last) one, with a
// health check that gives the mock time to start.
func TestDockerfile(t *testing.T) {
	ins := dockerfile(t)
	find := func(cmd, part string) int {
		return slices.IndexFunc(ins, func(i instruction) bool { return i.cmd == cmd && strings.Contains(i.args, part) })
	}
	if i := find("ARG", "GO_VERSION="); i < 0 || ins[i].args != "GO_VERSION="+goModVersion(t) {
		t.Errorf("ARG GO_VERSION is not %s, the release go.mod names", goModVersion(t))
	}
	for _, arg := range []string{"BUILD_IMAGE=docker.io/library/golang:${GO_VERSION}-bookworm", "RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot", "BINARIES=build"} {
		if i := find("ARG", arg); i < 0 || ins[i].args != arg || i > find("FROM", "") {
			t.Errorf("no ARG %s before the first FROM", arg)
		}
	}
	if find("FROM", "${BUILD_IMAGE} AS build") < 0 {
		t.Error("the build stage is not FROM ${BUILD_IMAGE} AS build")
	}
	// One build stage per binary, FROM build, with ARG VERSION before a go
	// build that stamps it.
	for _, bin := range []string{"inventory-mock", "inventory-conformance"} {
		from := find("FROM", "build AS build-"+strings.TrimPrefix(bin, "inventory-"))
		build := slices.IndexFunc(ins, func(i instruction) bool {
			return i.cmd == "RUN" && strings.Contains(i.args, "go build") && strings.HasSuffix(i.args, "-o /out/"+bin+" ./cmd/"+bin)
		})
		arg := -1
		if from >= 0 {
			if i := slices.IndexFunc(ins[from:], func(i instruction) bool { return i.cmd == "ARG" && strings.HasPrefix(i.args, "VERSION") }); i >= 0 {
				arg = from + i
			}
		}
		switch {
		case from < 0 || build < from:
			t.Errorf("no stage FROM build AS build-%s whose go build writes /out/%s", strings.TrimPrefix(bin, "inventory-"), bin)
		case arg < 0 || arg > build:
			t.Errorf("%s: no ARG VERSION in its build stage before the go build", bin)
		case !strings.Contains(ins[build].args, "-ldflags") || !strings.Contains(ins[build].args, "-X 'main.version=${VERSION"):
			t.Errorf("%s: the go build does not stamp main.version from $VERSION: %s", bin, ins[build].args)
		}
	}
	// The runtime stages: FROM ${RUNTIME_IMAGE}, the binary copied from the
	// build, USER 65532:65532 (distroless's nonroot, which an image
	// without /etc/passwd cannot name), an ENTRYPOINT running the binary.
	var stages []string
	for i, in := range ins {
		if in.cmd != "FROM" || !strings.HasPrefix(in.args, "${RUNTIME_IMAGE} AS ") {
			continue
		}
		name := strings.TrimPrefix(in.args, "${RUNTIME_IMAGE} AS ")
		stages = append(stages, name)
		end := slices.IndexFunc(ins[i+1:], func(i instruction) bool { return i.cmd == "FROM" })
		stage := ins[i+1:]
		if end >= 0 {
			stage = stage[:end]
		}
		bin := map[string]string{"mock": "inventory-mock", "conformance": "inventory-conformance"}[name]
		has := func(cmd, args string) bool {
			return slices.Contains(stage, instruction{cmd, args})
		}
		if !has("COPY", "--from=binary-"+name+" /out/"+bin+" /usr/local/bin/"+bin) || !has("USER", "65532:65532") ||
			!has("ENTRYPOINT", `["/usr/local/bin/`+bin+`"]`) {
			t.Errorf("stage %s: want COPY --from=binary-%[1]s of /out/%s, USER 65532:65532 and ENTRYPOINT [\"/usr/local/bin/%s\"]", name, bin, bin)
		}
		// The binary comes from the stage BINARIES names: build-NAME
		// compiles it, prebuilt-NAME copies it from the build context.
		if find("FROM", "${BINARIES}-"+name+" AS binary-"+name) < 0 {
			t.Errorf("no stage FROM ${BINARIES}-%s AS binary-%[1]s", name)
		}
		if pre := find("FROM", "scratch AS prebuilt-"+name); pre < 0 || pre+1 >= len(ins) || ins[pre+1] != (instruction{"COPY", bin + " /out/" + bin}) {
			t.Errorf("no stage FROM scratch AS prebuilt-%s that copies %s from the build context to /out/%[2]s", name, bin)
		}
	}
	if !slices.Equal(stages, []string{"conformance", "mock"}) {
		t.Errorf("runtime stages %q; want conformance, then mock, the default target", stages)
	}
	if find("USER", "nonroot") >= 0 {
		t.Error("USER by name: Kubernetes' runAsNonRoot cannot verify it, and a runtime base without /etc/passwd (scratch) cannot resolve it")
	}
	hc := find("HEALTHCHECK", "CMD")
	if hc < 0 {
		t.Fatal("no HEALTHCHECK")
	}
	opts, cmd, _ := strings.Cut(ins[hc].args, "CMD ")
	for _, opt := range []string{"--interval=", "--timeout=", "--start-period=", "--retries="} {
		if !strings.Contains(opts, opt) {
			t.Errorf("HEALTHCHECK lacks %s", opt)
		}
	}
	if m := regexp.MustCompile(`--start-period=(\S+)`).FindStringSubmatch(opts); m != nil {
		if d, err := time.ParseDuration(m[1]); err != nil || d < 5*time.Second {
			t.Errorf("HEALTHCHECK --start-period=%s; want at least 5s, for start-up with a large --generate", m[1])
		}
	}
	entry := find("ENTRYPOINT", "inventory-mock")
	if entry < 0 || cmd != `["/usr/local/bin/inventory-mock", "--health-check"]` || !strings.Contains(ins[entry].args, `"/usr/local/bin/inventory-mock"`) {
		t.Errorf("HEALTHCHECK CMD %s does not run the image's binary with --health-check", cmd)
	}
}

// buildAsDockerfile runs the Dockerfile's go build command of the mock
// with sh, as the image's RUN does, outside Docker, with VERSION set to
// version ("": not set), and returns the binary it wrote.
func buildAsDockerfile(t *testing.T, version string) string {
	t.Helper()
	return buildAsDockerfileCmd(t, version, "inventory-mock")
}

// buildAsDockerfileCmd is buildAsDockerfile for the command named bin.
func buildAsDockerfileCmd(t *testing.T, version, bin string) string {
	t.Helper()
	return buildAsDockerfileIn(t, context.Background(), version, bin, t.TempDir())
}

// buildAsDockerfileIn is buildAsDockerfileCmd writing the binary into the
// directory out, and stopping when ctx ends.
func buildAsDockerfileIn(t *testing.T, ctx context.Context, version, bin, out string) string {
	t.Helper()
	ins := dockerfile(t)
	i := slices.IndexFunc(ins, func(i instruction) bool {
		return i.cmd == "RUN" && strings.Contains(i.args, "go build") && strings.Contains(i.args, "/out/"+bin+" ")
	})
	if i < 0 {
		t.Fatalf("the Dockerfile has no go build of %s", bin)
	}
	script := strings.ReplaceAll(ins[i].args, "/out/", out+"/")
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = root
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "VERSION=") })
	if version != "" {
		cmd.Env = append(cmd.Env, "VERSION="+version)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the Dockerfile's build command: %v\n%s\n%s", err, script, b)
	}
	return filepath.Join(out, bin)
}

// TestDockerfileBuild runs the Dockerfile's build commands outside Docker
// without VERSION: each binary's --version says it was given none.
// TestBinary builds with VERSION set.
func TestDockerfileBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands")
	}
	for _, name := range []string{"inventory-mock", "inventory-conformance"} {
		bin := buildAsDockerfileCmd(t, "", name)
		want := name + " unknown (docker build without --build-arg VERSION)\n"
		if out, err := exec.Command(bin, "--version").Output(); err != nil || string(out) != want {
			t.Errorf("%s --version = %q, %v; want %q", name, out, err, want)
		}
	}
}

// dockerignore reads .dockerignore as Docker does (moby/patternmatcher):
// patterns relative to the context's root, a leading / dropped, ** for any
// number of directories, ! to take a path back; a pattern that matches a
// directory matches what is under it; the last matching pattern decides.
type dockerignore []ignorePattern

type ignorePattern struct {
	re      *regexp.Regexp
	exclude bool // false: a ! pattern, which takes paths back
}

func readDockerignore(t *testing.T) dockerignore {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	return parseDockerignore(string(b))
}

func parseDockerignore(text string) dockerignore {
	var d dockerignore
	for _, line := range strings.Split(text, "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		exclude := !strings.HasPrefix(p, "!")
		p = path.Clean(strings.TrimPrefix(p, "!"))
		if len(p) > 1 {
			p = strings.TrimPrefix(p, "/")
		}
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(p); i++ {
			switch {
			case strings.HasPrefix(p[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(p[i:], "**"):
				re.WriteString(".*")
				i++
			case p[i] == '*':
				re.WriteString("[^/]*")
			case p[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		}
		re.WriteString("$")
		d = append(d, ignorePattern{regexp.MustCompile(re.String()), exclude})
	}
	return d
}

// excludes reports whether the build context leaves out file, a path
// relative to the root with slashes.
func (d dockerignore) excludes(file string) bool {
	out := false
	for _, p := range d {
		for dir := file; dir != "." && dir != "/"; dir = path.Dir(dir) {
			if p.re.MatchString(dir) {
				out = p.exclude
				break
			}
		}
	}
	return out
}

// readmeBinaries returns the files the READMEs' go build commands leave,
// relative to the root, where they are run.
func readmeBinaries(t *testing.T) []string {
	t.Helper()
	var bins []string
	for _, doc := range []string{"README.md", "conformance/README.md"} {
		b, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`go build [^\n]*?-o (\S+)`).FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(bins, m[1]) {
				bins = append(bins, m[1])
			}
		}
	}
	if len(bins) < 2 {
		t.Fatalf("found %d go build -o commands in the READMEs; want those of the mock and the suite", len(bins))
	}
	return bins
}

// TestDockerignore: the build context leaves out version control, CI,
// built binaries and reports, and keeps every file the image's go build
// reads (go list names them).
func TestDockerignore(t *testing.T) {
	// The matcher itself, on Docker's rules.
	m := parseDockerignore("# comment\n/bin/\n**/testdata\n*.test\nlogs\n!logs/keep\n")
	for file, want := range map[string]bool{
		"bin": true, "bin/x": true, "cmd/bin/x": false, "testdata": true, "a/b/testdata/c": true,
		"x.test": true, "cmd/x.test": false, "logs/a": true, "logs/keep": false, "# comment": false,
	} {
		if got := m.excludes(file); got != want {
			t.Errorf("the matcher: %s excluded = %v; want %v", file, got, want)
		}
	}
	d := readDockerignore(t)
	out := append([]string{".git", ".git/HEAD", ".git/objects/ab/cdef", ".ci/run", "reports/conformance.xml", "mockserver.test", "cmd/inventory-mock/inventory-mock.test", "mock.pem", "tmp/mock.pem"}, readmeBinaries(t)...)
	for _, f := range out {
		if !d.excludes(f) {
			t.Errorf(".dockerignore lets %s into the build context", f)
		}
	}
	if testing.Short() {
		return
	}
	list := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}|{{join .GoFiles ","}}|{{join .EmbedFiles ","}}{{end}}{{end}}`, "./cmd/inventory-mock")
	list.Dir = root
	b, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	abs, _ := filepath.Abs(root)
	in := []string{"go.mod", "go.sum"}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		dir, files, _ := strings.Cut(line, "|")
		rel, err := filepath.Rel(abs, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.FieldsFunc(files, func(r rune) bool { return r == ',' || r == '|' }) {
			in = append(in, filepath.ToSlash(filepath.Join(rel, f)))
		}
	}
	if len(in) < 20 {
		t.Fatalf("go list named %d files; want the mock's packages and embedded files", len(in))
	}
	for _, f := range in {
		if d.excludes(f) {
			t.Errorf(".dockerignore leaves out %s, which the image's go build reads", f)
		}
	}
}

// TestGitignore: git ignores the binaries the READMEs' go build commands
// leave in the checkout, and the test binaries of go test -c.
func TestGitignore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := exec.Command("git", "-C", root, "rev-parse", "--git-dir").Run(); err != nil {
		t.Skip("not in a git checkout")
	}
	for _, f := range append(readmeBinaries(t), "mockserver.test", "reports/conformance.xml") {
		if err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", f).Run(); err != nil {
			t.Errorf(".gitignore does not cover %s", f)
		}
	}
	if err := exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", "cmd/inventory-mock/main.go").Run(); err == nil {
		t.Error(".gitignore covers cmd/inventory-mock/main.go")
	}
}

// compose reads docker/compose.yaml: the file itself, or, where a Compose
// client is installed, what Compose makes of it with env set.
type composeFile struct {
	Services map[string]struct {
		Build struct {
			Context    string
			Dockerfile string
			Args       map[string]*string
		}
		Environment any
		Healthcheck struct {
			Test        []string
			StartPeriod string `yaml:"start_period"`
		}
	}
}

// environment returns a service's environment as a map; a variable given
// without a value (passed from the shell only if set there) maps to nil.
func environment(t *testing.T, env any) map[string]*string {
	t.Helper()
	out := map[string]*string{}
	switch e := env.(type) {
	case []any:
		for _, kv := range e {
			k, v, ok := strings.Cut(kv.(string), "=")
			if ok {
				out[k] = &v
			} else {
				out[k] = nil
			}
		}
	case map[string]any:
		for k, v := range e {
			if v == nil {
				out[k] = nil
			} else {
				s, _ := v.(string)
				out[k] = &s
			}
		}
	default:
		t.Fatalf("environment of an unknown form: %T", env)
	}
	return out
}

// show prints a value that may be missing.
func show(v *string) string {
	if v == nil {
		return "(no value)"
	}
	return strconv.Quote(*v)
}

// keyVariables are the variables the mock refuses set but empty.
func keyVariables() []string {
	var names []string
	for _, name := range newParser(&options{}).Tagged("notempty") {
		names = append(names, envName(name))
	}
	return names
}

// TestComposeFile: compose passes VERSION to the build, passes the key
// variables through only when they are set (never as ""), names only the
// mock's own variables, and checks health as the image does.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "docker/compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	s, ok := c.Services["inventory-mock"]
	if !ok {
		t.Fatal("no inventory-mock service")
	}
	if _, err := os.Stat(filepath.Join(root, "docker", s.Build.Context, s.Build.Dockerfile)); err != nil {
		t.Errorf("build: %v", err)
	}
	if v := s.Build.Args["VERSION"]; v == nil || !strings.Contains(*v, "${VERSION") {
		t.Errorf("build args: VERSION = %s; want it from $VERSION", show(v))
	}
	env := environment(t, s.Environment)
	keys := keyVariables()
	if len(keys) < 2 {
		t.Fatalf("key variables %q; want the API keys' and the admin key's", keys)
	}
	for _, k := range keys {
		if v, ok := env[k]; !ok || v != nil {
			t.Errorf("environment: %s = %s; want it listed without a value, passed only when set", k, show(v))
		}
	}
	for k := range env {
		known := false
		for _, name := range newParser(&options{}).Names() {
			known = known || envName(name) == k
		}
		if !known {
			t.Errorf("environment: %s is no variable of the mock", k)
		}
	}
	if !slices.Contains(s.Healthcheck.Test, "--health-check") || s.Healthcheck.StartPeriod == "" {
		t.Errorf("healthcheck = %+v; want --health-check with a start period", s.Healthcheck)
	}
}

// TestComposeConfig asks a Compose client what it makes of the file,
// without an engine: an unset key variable is left out of the container,
// one set but empty reaches it empty (and the mock refuses it), and
// VERSION reaches the build. It skips where no Compose client is installed.
func TestComposeConfig(t *testing.T) {
	argv := composeCommand()
	if argv == nil {
		missing(t, "INVENTORY_REQUIRE_COMPOSE", "no Compose client (docker compose or docker-compose): compose.yaml's environment is not checked")
	}
	config := func(env ...string) composeFile {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], append(argv[1:], "-f", filepath.Join(root, "docker/compose.yaml"), "config")...)
		cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
			return strings.HasPrefix(kv, "VERSION=") || strings.HasPrefix(kv, "INVENTORY_MOCK_")
		})
		cmd.Env = append(cmd.Env, env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s config: %v\n%s", strings.Join(argv, " "), err, &stderr)
		}
		var c composeFile
		if err := yaml.Unmarshal(out, &c); err != nil {
			t.Fatalf("%s config printed no YAML: %v\n%s", strings.Join(argv, " "), err, out)
		}
		return c
	}
	unset := environment(t, config().Services["inventory-mock"].Environment)
	for _, k := range keyVariables() {
		if v := unset[k]; v != nil {
			t.Errorf("%s unset in the shell: the container gets %q; want it left out", k, *v)
		}
	}
	set := config("VERSION=v1.2.3", "INVENTORY_MOCK_API_KEYS=", "INVENTORY_MOCK_ADMIN_KEY=adm")
	env := environment(t, set.Services["inventory-mock"].Environment)
	if v := env["INVENTORY_MOCK_API_KEYS"]; v == nil || *v != "" {
		t.Errorf("INVENTORY_MOCK_API_KEYS set but empty: the container gets %s; want it empty, for the mock to refuse", show(v))
	}
	if v := env["INVENTORY_MOCK_ADMIN_KEY"]; v == nil || *v != "adm" {
		t.Errorf("INVENTORY_MOCK_ADMIN_KEY=adm: the container gets %s", show(v))
	}
	if v := set.Services["inventory-mock"].Build.Args["VERSION"]; v == nil || *v != "v1.2.3" {
		t.Errorf("VERSION=v1.2.3: build arg VERSION = %s", show(v))
	}
}
