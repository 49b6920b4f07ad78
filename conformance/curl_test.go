package conformance

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// A seen request, as a server received it.
type seen struct {
	method, uri, body string
	auth              []string // nil: no header
	contentType       string
}

// TestCurlReplaysTheSameRequest sends requests with the suite, renders
// each as its curl line, runs the line in a shell with the key in
// $INVENTORY_API_KEY, and checks that the server saw the same request
// both times: an empty header stays an empty header.
func TestCurlReplaysTheSameRequest(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	const key = "k3y'with$odd\"chars"
	var mu sync.Mutex // guards got
	var got []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.RequestURI(), string(b), r.Header.Values("Authorization"), r.Header.Get("Content-Type")})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[]`)
	}))
	defer srv.Close()
	tg, err := NewTarget(Config{BaseURL: srv.URL + "/v1", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	reqs := []Request{
		{Method: "GET", Path: "/inventory"},
		{Method: "GET", Path: "/inventory", Auth: NoAuth},
		{Method: "GET", Path: "/inventory", Auth: EmptyAuth},
		{Method: "GET", Path: "/inventory", Auth: "Bearer"},
		{Method: "GET", Path: "/inventory", Auth: "Basic " + key},
		{Method: "GET", Path: "/inventory?api_key=" + key, Auth: NoAuth},
		{Method: "PATCH", Path: "/inventory/1", Body: []byte(`{"quantity":5,"note":"it's $HOME \` + "`x`" + `"}`)},
		{Method: "PATCH", Path: "/inventory/1", Body: []byte{}},
		{Method: "PATCH", Path: "/inventory/abc", Body: []byte(`{"quantity":`), ContentType: "text/plain"},
	}
	for _, r := range reqs {
		x := tg.Send(context.Background(), r)
		mu.Lock()
		want := got[len(got)-1]
		mu.Unlock()
		cmd := exec.Command("sh", "-c", x.Curl()+" >/dev/null")
		cmd.Env = append(os.Environ(), "INVENTORY_API_KEY="+key)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", x.Curl(), err, out)
		}
		mu.Lock()
		replay := got[len(got)-1]
		mu.Unlock()
		if replay.method != want.method || replay.uri != want.uri || replay.body != want.body ||
			strings.Join(replay.auth, "|") != strings.Join(want.auth, "|") || (replay.auth == nil) != (want.auth == nil) ||
			replay.contentType != want.contentType {
			t.Errorf("curl line %s\nsent   %+v\nsuite  %+v", x.Curl(), replay, want)
		}
	}
}
