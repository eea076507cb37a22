package chans_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSelectSnippets checks that every Go snippet of the README's
// Select section, and of the subsections that follow it up to the next
// section, is copied verbatim (one tab of indentation less) from a tested
// example, so that none can drift from code that runs.
func TestReadmeSelectSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range []string{"example_test.go", "select_example_test.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Select\n")
	if start < 0 {
		t.Fatal("README.md has no Select section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) == 0 {
		t.Fatal("no Go snippets in the Select section")
	}
	for _, b := range blocks {
		lines := strings.Split(strings.TrimRight(b[1], "\n"), "\n")
		for i, l := range lines {
			if l != "" {
				lines[i] = "\t" + l
			}
		}
		if !strings.Contains(src.String(), strings.Join(lines, "\n")+"\n") {
			t.Errorf("README snippet not found verbatim in the examples:\n%s", b[1])
		}
	}
}
