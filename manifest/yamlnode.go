package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/units"
)

// source is one manifest file: its name and lines, for the places of values
// inside multi-line strings (a shell script in a literal block).
type source struct {
	file  string
	lines []string
}

// pos is the place of a YAML node: its line and column; for a quoted
// scalar, the column of its text after the quote.
func (s *source) pos(n *yaml.Node) planfile.Pos {
	if n == nil {
		return planfile.Pos{}
	}
	p := planfile.Pos{File: s.file, Line: n.Line, Col: n.Column}
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		p.Col++
	}
	return p
}

// at returns the place of byte offset off of a scalar's value. For a literal
// or folded block (| or >) each value line is a source line after the
// indicator, indented; for a one-line plain or quoted scalar the value starts
// at the node's column (after the quote). Escapes in double-quoted strings
// and flow scalars folded over lines shift columns; the place is then the
// line's best estimate.
func (s *source) at(n *yaml.Node, off int) planfile.Pos {
	if n == nil {
		return planfile.Pos{}
	}
	v := n.Value
	off = max(0, min(off, len(v)))
	k := strings.Count(v[:off], "\n")
	col := off - (strings.LastIndex(v[:off], "\n") + 1)
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		// Content lines start after the line of the | or >, at the block's
		// indent, after any blank lines.
		// The block's indent is that of its first content line; deeper lines
		// keep their extra spaces in the value.
		line := n.Line + 1
		for line-1 < len(s.lines) && strings.TrimSpace(s.lines[line-1]) == "" {
			line++
		}
		indent := 0
		if line-1 < len(s.lines) {
			l := s.lines[line-1]
			indent = len(l) - len(strings.TrimLeft(l, " "))
		}
		return planfile.Pos{File: s.file, Line: line + k, Col: indent + 1 + col}
	}
	p := s.pos(n)
	if k > 0 {
		return planfile.Pos{File: s.file, Line: n.Line + k, Col: 1 + col}
	}
	p.Col += col
	return p
}

// key returns the value node of key in mapping n, or nil.
func key(n *yaml.Node, k string) *yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

// keyNode returns the key node of k in mapping n (for the place of a key
// whose value is a mapping), or nil.
func keyNode(n *yaml.Node, k string) *yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return n.Content[i]
		}
	}
	return nil
}

// path follows keys through nested mappings.
func path(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		n = key(n, k)
		if n == nil {
			return nil
		}
	}
	return n
}

// resolve follows aliases and unwraps a document node.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil {
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

// items returns the elements of a sequence node (nil for anything else).
func items(n *yaml.Node) []*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out[i] = resolve(c)
	}
	return out
}

// pairs returns the key and value nodes of a mapping, in order.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		out = append(out, [2]*yaml.Node{n.Content[i], resolve(n.Content[i+1])})
	}
	return out
}

// scalar returns a scalar's value and whether n is a non-null scalar.
func scalar(n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", false
	}
	return n.Value, true
}

// str returns a scalar's value, or "".
func str(n *yaml.Node) string {
	v, _ := scalar(n)
	return v
}

// Ranges of the counts a manifest states, as the plan's limits have them:
// pods of a pool (a plan's workers per pool), GPUs of a pod (a plan's tp),
// pods of one engine (multinode, leader/worker groups).
const (
	maxReplicas    = 100_000
	maxGPUsPerPod  = 1024
	maxPodsPerUnit = 1024
)

// count reads a scalar as a whole count in [lo, hi] (replicas, a GPU
// limit). Anything else (-3, .nan, 2.5, 1e300, "two") is a finding at the
// value, and ok is false: the caller keeps its default, and the finding
// fails the review.
func (w *worker) count(src *source, n *yaml.Node, field string, lo, hi int) (int, bool) {
	v, _ := scalar(n)
	i, err := strconv.Atoi(strings.TrimSpace(v))
	if err == nil && i >= lo && i <= hi {
		return i, true
	}
	w.finding(Finding{ID: IDBadValue, Severity: Deny, At: src.pos(n), Field: "pools." + w.name + ".workers",
		Message: fmt.Sprintf("%s: %s is not a whole number from %d to %s: %s", w.name, field, lo, units.Thousands(int64(hi)), safetext.Quote(v)),
		Why:     "Kubernetes refuses a negative or fractional count, and kvplan does not plan a pool past its limits; the count written is not the one that runs",
		Fix:     fmt.Sprintf("write %s as a whole number from %d to %s", field, lo, units.Thousands(int64(hi)))})
	return 0, false
}

// boolValue reads a scalar as a YAML boolean.
func boolValue(n *yaml.Node) (b, ok bool) {
	v, isScalar := scalar(n)
	if !isScalar {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	return false, false
}
