package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// A table is a header and rows of cells, written with every column padded
// to its widest cell and two spaces between columns. When the whole table
// is wider than the width it is written in, it is split into several
// tables, one under the other: each repeats the first keys columns, which
// name the rows, and takes as many of the other columns as fit. A column
// glued to the one before it (a confidence interval to its median) is
// never split from it.
type table struct {
	header []string
	glue   []bool // glue[i]: column i stays with column i-1
	keys   int
	rows   [][]string
}

// add appends a column, glued to the one before it or not.
func (t *table) add(head string, glued bool) {
	t.header = append(t.header, head)
	t.glue = append(t.glue, glued)
}

const colGap = 2 // spaces between columns

// write writes t in blocks of at most width columns (one column too wide
// on its own still gets a block).
func (t *table) write(w io.Writer, width int) {
	widths := make([]int, len(t.header))
	for i, h := range t.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range t.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	span := func(cols []int) int {
		n := 0
		for _, c := range cols {
			n += widths[c] + colGap
		}
		return n - colGap
	}

	// Units of columns that must stay together, after the keys.
	var units [][]int
	for i := t.keys; i < len(t.header); i++ {
		if t.glue[i] && len(units) > 0 {
			units[len(units)-1] = append(units[len(units)-1], i)
		} else {
			units = append(units, []int{i})
		}
	}
	keys := make([]int, t.keys)
	for i := range keys {
		keys[i] = i
	}
	var blocks [][]int
	cur := keys
	for _, u := range units {
		next := append(append([]int(nil), cur...), u...)
		if len(cur) > len(keys) && span(next) > width {
			blocks = append(blocks, cur)
			next = append(append([]int(nil), keys...), u...)
		}
		cur = next
	}
	blocks = append(blocks, cur)

	for bi, cols := range blocks {
		if bi > 0 {
			fmt.Fprintln(w)
		}
		line := func(cells []string) {
			var b strings.Builder
			for j, c := range cols {
				cell := ""
				if c < len(cells) {
					cell = cells[c]
				}
				b.WriteString(cell)
				if j < len(cols)-1 {
					b.WriteString(strings.Repeat(" ", widths[c]-utf8.RuneCountInString(cell)+colGap))
				}
			}
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
		}
		line(t.header)
		for _, row := range t.rows {
			line(row)
		}
	}
}

// wrap breaks text into lines of at most width columns at spaces, keeping
// the text's leading spaces on the first line and indenting every later
// line by indent; a word longer than a line stands alone. Each line ends
// with a newline.
func wrap(text string, width int, indent string) string {
	words := strings.Fields(text)
	lead := text[:len(text)-len(strings.TrimLeft(text, " "))]
	var b strings.Builder
	line, n, empty := lead, utf8.RuneCountInString(lead), true
	for _, word := range words {
		wn := utf8.RuneCountInString(word)
		switch {
		case empty:
			line, n = line+word, n+wn
		case n+1+wn <= width:
			line, n = line+" "+word, n+1+wn
		default:
			b.WriteString(line + "\n")
			line, n = indent+word, utf8.RuneCountInString(indent)+wn
		}
		empty = false
	}
	if !empty {
		b.WriteString(line + "\n")
	}
	return b.String()
}
