// Package tomlpos finds the line of a key in a TOML document.
//
// BurntSushi/toml reports positions for syntax errors but not for keys that
// decoded fine and then failed validation or were unknown, so kvplan scans the
// text once more to point a user at the line to change. It understands table
// headers ([a.b], [[a]]), dotted and quoted keys, and skips multi-line arrays
// and strings; that is all catalog and plan files use.
package tomlpos

import (
	"slices"
	"strings"
)

// Entry is one key = value line, or one table header, of a document.
type Entry struct {
	Line  int      // 1-based line number
	Path  []string // full key path: header path + key
	Array int      // index of the enclosing [[array]] element, or -1
	Root  string   // name of the enclosing [[array]] table, if any
}

// Index lists every key and header of a TOML document in order. Lookups
// are map reads, so a file of 20,000 pools costs no more per lookup than a
// file of two.
type Index struct {
	Entries []Entry

	byPath  map[string][]int   // joined path → lines, in file order
	byArray map[arrayKey][]int // (root, element) → indices into Entries
	below   map[string]int     // joined path → first line of a key strictly below it
}

type arrayKey struct {
	root    string
	element int
}

// pathKey joins a key path; NUL cannot occur in a TOML key's path parts as
// splitKey makes them.
func pathKey(path []string) string { return strings.Join(path, "\x00") }

func (x *Index) build() {
	x.byPath = make(map[string][]int, len(x.Entries))
	x.byArray = map[arrayKey][]int{}
	x.below = map[string]int{}
	for i, e := range x.Entries {
		k := pathKey(e.Path)
		x.byPath[k] = append(x.byPath[k], e.Line)
		if e.Root != "" {
			ak := arrayKey{e.Root, e.Array}
			x.byArray[ak] = append(x.byArray[ak], i)
		}
		for n := 1; n < len(e.Path); n++ {
			pk := pathKey(e.Path[:n])
			if _, ok := x.below[pk]; !ok {
				x.below[pk] = e.Line
			}
		}
	}
}

// New scans data and indexes its keys.
func New(data []byte) *Index {
	idx := &Index{}
	var header []string
	arrayCount := map[string]int{}
	root, arrayIdx := "", -1
	depth := 0       // bracket depth of a multi-line array value
	inMulti := false // inside a """ or ''' string
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if inMulti {
			if strings.Contains(line, `"""`) || strings.Contains(line, `'''`) {
				inMulti = false
			}
			continue
		}
		if depth > 0 {
			depth += strings.Count(line, "[") - strings.Count(line, "]")
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[[") {
			end := strings.Index(line, "]]")
			if end < 0 {
				continue
			}
			header = splitKey(line[2:end])
			name := strings.Join(header, ".")
			// [[model.layout]] inside a [[model]] element belongs to it.
			if root == "" || !hasPrefix(header, splitKey(root)) || name == root {
				root, arrayIdx = name, arrayCount[name]
				arrayCount[name]++
			}
			idx.Entries = append(idx.Entries, Entry{Line: i + 1, Path: header, Array: arrayIdx, Root: root})
			continue
		}
		if strings.HasPrefix(line, "[") {
			end := strings.Index(line, "]")
			if end < 0 {
				continue
			}
			header = splitKey(line[1:end])
			if root != "" && !hasPrefix(header, splitKey(root)) {
				root, arrayIdx = "", -1
			}
			idx.Entries = append(idx.Entries, Entry{Line: i + 1, Path: header, Array: arrayIdx, Root: root})
			continue
		}
		eq := strings.Index(line, "=")
		if eq <= 0 {
			continue
		}
		key := splitKey(line[:eq])
		path := append(append([]string{}, header...), key...)
		idx.Entries = append(idx.Entries, Entry{Line: i + 1, Path: path, Array: arrayIdx, Root: root})
		value := strings.TrimSpace(line[eq+1:])
		if strings.HasPrefix(value, `"""`) || strings.HasPrefix(value, `'''`) {
			if strings.Count(value, value[:3]) < 2 {
				inMulti = true
			}
		}
		if strings.HasPrefix(value, "[") {
			depth = strings.Count(value, "[") - strings.Count(value, "]")
		}
	}
	idx.build()
	return idx
}

// Line returns the line of the n-th (0-based) occurrence of the key path, or 0.
func (x *Index) Line(path []string, n int) int {
	if x.byPath == nil {
		x.build()
	}
	lines := x.byPath[pathKey(path)]
	if n < 0 || n >= len(lines) {
		return 0
	}
	return lines[n]
}

// FirstBelow returns the line of the first key whose path starts with path
// and is longer (a key of a table written with dotted keys, which has no
// header of its own), or 0.
func (x *Index) FirstBelow(path []string) int {
	if x.byPath == nil {
		x.build()
	}
	return x.below[pathKey(path)]
}

// InArray returns the line of key (a path relative to the element) inside the
// element-th [[array]] table, or the line of that element's header when the
// key is absent, or 0 when there is no such element.
func (x *Index) InArray(array string, element int, key ...string) int {
	if x.byPath == nil {
		x.build()
	}
	want := append(splitKey(array), key...)
	header := 0
	for _, i := range x.byArray[arrayKey{array, element}] {
		e := x.Entries[i]
		if header == 0 {
			header = e.Line
		}
		if len(key) > 0 && slices.Equal(e.Path, want) {
			return e.Line
		}
	}
	return header
}

func splitKey(s string) []string {
	var parts []string
	for _, p := range strings.Split(s, ".") {
		p = strings.TrimSpace(p)
		p = strings.Trim(p, `"'`)
		parts = append(parts, p)
	}
	return parts
}

func hasPrefix(path, prefix []string) bool {
	return len(path) >= len(prefix) && slices.Equal(path[:len(prefix)], prefix)
}
