package svgplot

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// wellFormed parses svg as XML and returns the text of its text elements.
func wellFormed(t *testing.T, svg []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var texts []string
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return texts
}

func sample() Figure {
	nan := math.NaN()
	return Figure{
		Title: "throughput <&> \"quotes\"",
		Notes: []string{"cpu · machine", "command -x 'y'"},
		Panels: []Panel{
			{
				Title: "mpmc", Subtitle: "work=100ns", XLabel: "GOMAXPROCS", YLabel: "messages/s",
				XTicks: []float64{1, 2, 4, 8, 16}, LogX: true,
				VLines: []VLine{{X: 16, Label: "2 NUMA domains"}},
				Series: []Series{
					{Label: "native cap=0", Color: "#0072B2", Points: []Point{{1, 3e6, 2.9e6, 3.1e6}, {2, 5e6, 4e6, 6e6}, {4, 8e6, nan, nan}, {8, 9e6, math.Inf(-1), math.Inf(1)}, {16, 7e6, 6e6, 8e6}}},
					{Label: "chans cap=<1024>", Color: "#D55E00", Dash: "7 4", Marker: Square, Points: []Point{{1, 3.5e6, 3e6, 4e6}, {16, 2e7, 1.9e7, 2.1e7}}},
					{Label: "triangle", Color: "green", Dash: "2 3", Marker: Triangle, Points: []Point{{2, 1e6, 0, 0}}},
					{Label: "diamond", Color: "purple", Marker: Diamond, Points: []Point{{4, 1e6, -5, 2e6}}},
				},
			},
			{Title: "empty panel"},
			{Title: "one point, linear", Series: []Series{{Label: "x", Color: "black", Points: []Point{{3, 0, 0, 0}}}}},
			{Title: "log with bad x", LogX: true, Series: []Series{{Label: "x", Color: "black", Points: []Point{{0, 5, 4, 6}, {-1, 5, 4, 6}, {2, 5, 4, 6}}}}},
		},
	}
}

func TestWrite(t *testing.T) {
	f := sample()
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	svg := b.Bytes()
	texts := strings.Join(wellFormed(t, svg), "\n")
	for _, want := range []string{
		`throughput <&> "quotes"`, "mpmc", "work=100ns", "GOMAXPROCS", "messages/s",
		"2 NUMA domains", "native cap=0", "chans cap=<1024>", "16", "empty panel", "20M",
	} {
		if !strings.Contains(texts, want) {
			t.Errorf("SVG text lacks %q", want)
		}
	}
	for _, bad := range []string{"NaN", "Inf"} {
		if bytes.Contains(svg, []byte(bad)) {
			t.Errorf("SVG contains %s", bad)
		}
	}
	if got := bytes.Count(svg, []byte("<circle")); got < 5 {
		t.Errorf("%d circle markers, want at least 5", got)
	}
	if !bytes.Contains(svg, []byte(`stroke-dasharray="7 4"`)) {
		t.Error("dashed series not dashed")
	}
	// The figure is two columns by two rows of panels.
	if !bytes.Contains(svg, []byte(`width="1236"`)) {
		t.Errorf("unexpected width: %s", svg[:200])
	}
	if dir := os.Getenv("SVGPLOT_OUT"); dir != "" {
		// For looking at: SVGPLOT_OUT=/tmp go test, then render it.
		if err := os.WriteFile(filepath.Join(dir, "svgplot-sample.svg"), svg, 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSinglePanel(t *testing.T) {
	f := Figure{Title: "one", Panels: []Panel{{Title: "p"}}}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, b.Bytes())
	if !bytes.Contains(b.Bytes(), []byte(`width="624"`)) {
		t.Errorf("single panel figure is not one column wide: %s", b.Bytes()[:200])
	}
}

// TestNoData checks that a panel with nothing to draw says so, in its own
// words if it has any, and that a panel with data does not.
func TestNoData(t *testing.T) {
	f := Figure{Panels: []Panel{
		{Title: "a"},
		{Title: "b", NoData: "interrupted <early>", Series: []Series{{Label: "s", Points: []Point{{0, 1, 0, 0}}}}, LogX: true},
		{Title: "c", NoData: "unseen", Series: []Series{{Label: "s", Points: []Point{{1, 1, 0, 0}}}}},
	}}
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	texts := wellFormed(t, b.Bytes())
	for want, n := range map[string]int{"no data": 1, "interrupted <early>": 1, "unseen": 0} {
		if got := slices.Index(texts, want); (got >= 0) != (n > 0) {
			t.Errorf("%q shown: %v, want %v (texts %q)", want, got >= 0, n > 0, texts)
		}
	}
}

func TestNiceStep(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{
		{0, 1}, {-3, 1}, {math.NaN(), 1}, {1, 1}, {1.2, 2}, {2, 2}, {2.2, 2.5}, {3, 5}, {7, 10}, {0.03, 0.05}, {8e5, 1e6}, {1.1e6, 2e6},
	} {
		if got := niceStep(tc.in); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("niceStep(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSI(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1"}, {12.5, "12.5"}, {999, "999"}, {1000, "1k"}, {2500, "2.5k"}, {1.5e6, "1.5M"},
		{12.3e6, "12.3M"}, {123.4e6, "123M"}, {999.6e6, "1G"}, {-2e3, "-2k"}, {0.25, "0.25"},
	} {
		if got := SI(tc.in); got != tc.want {
			t.Errorf("SI(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
