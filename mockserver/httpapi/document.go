package httpapi

import (
	"net/http"
	"sync"

	"github.com/pb33f/go-yaml"
)

// A Document serves an OpenAPI document with the server's own address as
// its first server, so Swagger UI or a generator pointed at the running
// mock calls the mock, not the hosts the document names. The document is
// parsed once, when first asked for (not at start-up, which it would slow
// by milliseconds); the rewritten text is kept per address asked for.
type Document struct {
	raw      []byte
	basePath string

	parse sync.Once
	root  *yaml.Node // nil if the document could not be parsed: served as it is

	mu     sync.Mutex // guards byHost
	byHost map[string][]byte
}

// maxHosts bounds the rewritten documents kept: a client naming a new Host
// on every request costs a rewrite, not memory.
const maxHosts = 32

// NewDocument serves raw, whose servers are under basePath.
func NewDocument(raw []byte, basePath string) *Document {
	return &Document{raw: raw, basePath: basePath, byHost: map[string][]byte{}}
}

func (d *Document) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Write(d.forHost(r))
}

// forHost returns the document with the mock's address, as the request
// reached it, first in servers.
func (d *Document) forHost(r *http.Request) []byte {
	d.parse.Do(func() {
		var root yaml.Node
		if yaml.Unmarshal(d.raw, &root) == nil && len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
			d.root = &root
		}
	})
	if d.root == nil || r.Host == "" {
		return d.raw
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	url := scheme + "://" + r.Host + d.basePath
	d.mu.Lock()
	b, ok := d.byHost[url]
	d.mu.Unlock()
	if ok {
		return b
	}
	b = d.rewrite(url)
	d.mu.Lock()
	if len(d.byHost) < maxHosts {
		d.byHost[url] = b
	}
	d.mu.Unlock()
	return b
}

// rewrite renders the document with a first server at url, leaving the
// parsed document as it is.
func (d *Document) rewrite(url string) []byte {
	mine := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "url"}, {Kind: yaml.ScalarNode, Value: url},
		{Kind: yaml.ScalarNode, Value: "description"}, {Kind: yaml.ScalarNode, Value: "This mock (inventory-mock), as you reached it."},
	}}
	top := *d.root.Content[0]
	top.Content = append([]*yaml.Node(nil), top.Content...)
	found := false
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "servers" && top.Content[i+1].Kind == yaml.SequenceNode {
			servers := *top.Content[i+1]
			servers.Content = append([]*yaml.Node{mine}, servers.Content...)
			servers.Style = 0
			top.Content[i+1] = &servers
			found = true
		}
	}
	if !found {
		top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "servers"},
			&yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{mine}})
	}
	root := *d.root
	root.Content = []*yaml.Node{&top}
	b, err := yaml.Marshal(&root)
	if err != nil {
		return d.raw
	}
	return b
}
