// Package reporttest reads the reports people read (report.Run's
// Markdown, HTML and Annotations) the way their readers do, for the tests
// of the commands that write them: it fails the test where a run's text
// broke a report's structure or a secret shows, and returns what a reader
// sees, for the test to look for the failures it expects.
package reporttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"regexp"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"
)

// A Markdown report as a reader sees it.
type Markdown struct {
	Headings []string // the headings' texts, escapes read
	Text     string   // the text outside code blocks, escapes read
	Blocks   []string // the fenced code blocks' contents
	Tables   int      // the tables
}

// ReadMarkdown reads a Markdown report as GitHub does, as far as a
// hostile text could change it, and fails the test where it did: a
// table row whose cells are not its header's, a code block that does not
// close with the fence it opened with, raw HTML but <br> outside a code
// block, a line outside a block that opens a list, quote or heading the
// report did not write, or a secret anywhere.
func ReadMarkdown(tb testing.TB, b []byte, secrets ...string) Markdown {
	tb.Helper()
	noSecret(tb, "the Markdown report", b, secrets)
	var md Markdown
	var text strings.Builder
	lines := strings.Split(string(b), "\n")
	cells := -1 // the cells of the table being read; -1: none
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if fence := leadingBackticks(l); fence >= 3 {
			var block []string
			closed := false
			for i++; i < len(lines); i++ {
				if n := leadingBackticks(lines[i]); n >= fence && strings.TrimSpace(lines[i][n:]) == "" {
					closed = true
					break
				}
				block = append(block, lines[i])
			}
			if !closed {
				tb.Errorf("the Markdown report: a code block opened with %d backticks does not close", fence)
			}
			md.Blocks = append(md.Blocks, strings.Join(block, "\n"))
			cells = -1
			continue
		}
		if strings.HasPrefix(l, "|") {
			n := len(splitRow(l))
			switch {
			case cells < 0:
				cells = n
				md.Tables++
			case n != cells:
				tb.Errorf("the Markdown report: a table row has %d cells, its header %d:\n%s", n, cells, l)
			}
		} else {
			cells = -1
		}
		if h, ok := strings.CutPrefix(l, "#"); ok {
			h = strings.TrimLeft(h, "#")
			if !strings.HasPrefix(h, " ") {
				tb.Errorf("the Markdown report: a line starts with # and is no heading: %q", l)
			}
			md.Headings = append(md.Headings, unescape(strings.TrimSpace(h)))
		}
		if tag := rawTag.FindString(strings.ReplaceAll(l, "<br>", "")); tag != "" {
			tb.Errorf("the Markdown report holds raw HTML %q outside a code block:\n%s", tag, l)
		}
		if strings.HasPrefix(l, ">") || setext.MatchString(l) || strings.HasPrefix(l, "    ") || strings.HasPrefix(l, "\t") {
			tb.Errorf("the Markdown report: a line the report did not write: %q", l)
		}
		text.WriteString(unescape(l) + "\n")
	}
	md.Text = text.String()
	return md
}

var (
	rawTag = regexp.MustCompile(`<[A-Za-z!/?]`)
	setext = regexp.MustCompile(`^ {0,3}(=+|-{2,})\s*$`) // "- " is an empty list item
)

// leadingBackticks counts the backticks a line starts with.
func leadingBackticks(l string) int {
	n := 0
	for n < len(l) && l[n] == '`' {
		n++
	}
	return n
}

// splitRow splits a table row at its unescaped pipes.
func splitRow(l string) []string {
	var cells []string
	var cell strings.Builder
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l):
			cell.WriteByte(l[i])
			cell.WriteByte(l[i+1])
			i++
		case l[i] == '|':
			cells = append(cells, cell.String())
			cell.Reset()
		default:
			cell.WriteByte(l[i])
		}
	}
	// "| a | b |" splits into "", " a ", " b ", "".
	if len(cells) > 0 {
		cells = cells[1:]
	}
	return cells
}

var backslashed = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)

// unescape reads Markdown's backslash escapes and HTML's entities.
func unescape(s string) string {
	return html.UnescapeString(backslashed.ReplaceAllString(s, "$1"))
}

// An HTML report as a reader sees it.
type HTML struct {
	Text     string   // every text of the page, closed <details> included
	Pre      []string // the texts of its <pre> elements: curl lines, answers
	Details  int      // its <details> elements
	Title    string
	Sections []string // the ids of its sections
}

// ReadHTML parses an HTML report and fails the test where it is not
// self-contained and inert: a script, frame, object, form, image, link
// or base element, an event attribute, a src, an href that leaves the
// page, a style element the Content-Security-Policy does not allow by
// its hash, a policy that allows more than that sheet, or a secret.
func ReadHTML(tb testing.TB, b []byte, secrets ...string) HTML {
	tb.Helper()
	noSecret(tb, "the HTML report", b, secrets)
	doc, err := nethtml.Parse(bytes.NewReader(b))
	if err != nil {
		tb.Fatalf("the HTML report does not parse: %v", err)
	}
	var h HTML
	var text strings.Builder
	var csp string
	var styles []string
	var walk func(n *nethtml.Node)
	walk = func(n *nethtml.Node) {
		switch n.Type {
		case nethtml.TextNode:
			text.WriteString(n.Data)
		case nethtml.ElementNode:
			switch n.Data {
			case "script", "iframe", "frame", "object", "embed", "form", "img", "link", "base", "audio", "video", "svg", "math":
				tb.Errorf("the HTML report holds a <%s> element", n.Data)
			case "style":
				if n.FirstChild != nil {
					styles = append(styles, n.FirstChild.Data)
				}
			case "details":
				h.Details++
			case "title":
				if n.FirstChild != nil {
					h.Title = n.FirstChild.Data
				}
			case "pre":
				var pre strings.Builder
				collect(n, &pre)
				h.Pre = append(h.Pre, pre.String())
			case "meta":
				if attr(n, "http-equiv") == "Content-Security-Policy" {
					csp = attr(n, "content")
				}
			case "section":
				h.Sections = append(h.Sections, attr(n, "id"))
			}
			for _, a := range n.Attr {
				switch {
				case strings.HasPrefix(strings.ToLower(a.Key), "on"):
					tb.Errorf("the HTML report: <%s %s=%q>", n.Data, a.Key, a.Val)
				case a.Key == "src" || a.Key == "srcset" || a.Key == "action" || a.Key == "formaction":
					tb.Errorf("the HTML report: <%s %s=%q>", n.Data, a.Key, a.Val)
				case a.Key == "href" && !strings.HasPrefix(a.Val, "#"):
					tb.Errorf("the HTML report links out of the page: <%s href=%q>", n.Data, a.Val)
				case a.Key == "style":
					tb.Errorf("the HTML report: an inline style attribute, which its policy refuses: <%s style=%q>", n.Data, a.Val)
				}
			}
			text.WriteString(" ")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	h.Text = text.String()
	if !strings.HasPrefix(csp, "default-src 'none'") {
		tb.Errorf("the HTML report's Content-Security-Policy is %q; want default-src 'none' first", csp)
	}
	for _, s := range styles {
		sum := sha256.Sum256([]byte(s))
		if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, want) {
			tb.Errorf("the HTML report's policy %q does not allow its style sheet (%s)", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") || strings.Contains(csp, "http") || strings.Contains(csp, "*") {
		tb.Errorf("the HTML report's policy allows more than its sheet: %q", csp)
	}
	return h
}

func collect(n *nethtml.Node, b *strings.Builder) {
	if n.Type == nethtml.TextNode {
		b.WriteString(n.Data)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		collect(c, b)
	}
}

func attr(n *nethtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// An Annotation is one GitHub workflow command, its values decoded.
type Annotation struct{ Level, Title, Message string }

var command = regexp.MustCompile(`^::(error|warning|notice) title=([^:]*)::(.*)$`)

// ReadAnnotations reads the workflow commands a run printed, among other
// lines, and fails the test where one is malformed (a property holding
// an unescaped : or ,, a message an unescaped CR) or holds a secret.
func ReadAnnotations(tb testing.TB, out []byte, secrets ...string) []Annotation {
	tb.Helper()
	var as []Annotation
	for _, l := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(l, "::") {
			continue
		}
		m := command.FindStringSubmatch(l)
		if m == nil {
			tb.Errorf("a line starts a workflow command and is no annotation: %q", l)
			continue
		}
		if strings.ContainsAny(m[2], ",\r") || strings.Contains(m[3], "\r") {
			tb.Errorf("an annotation not escaped: %q", l)
		}
		a := Annotation{Level: m[1], Title: decode(m[2]), Message: decode(m[3])}
		noSecret(tb, "an annotation", []byte(a.Title+a.Message), secrets)
		as = append(as, a)
	}
	noSecret(tb, "the output", out, secrets)
	return as
}

// decode reads GitHub's escapes, as the runner does.
func decode(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

func noSecret(tb testing.TB, what string, b []byte, secrets []string) {
	tb.Helper()
	for _, s := range secrets {
		if s != "" && bytes.Contains(b, []byte(s)) {
			tb.Errorf("%s holds a secret", what)
		}
	}
}
