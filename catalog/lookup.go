package catalog

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/internal/suggest"
)

// NotFoundError says a name is not in the catalog and offers the closest ones.
type NotFoundError struct {
	Kind    string   // "model", "link", "gpu", "engine"
	Name    string   // as the user typed it
	Closest []string // best first
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("unknown %s %s", e.Kind, safetext.Quote(e.Name))
	if len(e.Closest) > 0 {
		msg += "; did you mean " + strings.Join(e.Closest, ", ") + "?"
	}
	return msg + fmt.Sprintf(" (kvplan %ss list shows them all)", e.Kind)
}

// normalize makes names forgiving: case-insensitive, and an organisation
// prefix ("Qwen/") is dropped, so "Qwen/Qwen3-0.6B" finds "qwen3-0.6b".
func normalize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if i := strings.LastIndex(s, "/"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// normalizesTo reports whether normalize(s) == want without building
// normalize(s) when s is ASCII: a lookup compares against every name and
// alias of its kind, and most carry capitals (Hugging Face ids).
func normalizesTo(s, want string) bool {
	t := strings.TrimSpace(s)
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		t = t[i+1:]
	}
	if len(t) != len(want) {
		return !isASCII(t) && normalize(s) == want
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c >= utf8.RuneSelf {
			return normalize(s) == want
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != want[i] {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func find[T any](kind, name string, list []*T, names func(*T) []string) (*T, error) {
	want := normalize(name)
	for _, x := range list {
		for _, n := range names(x) {
			if n != "" && normalizesTo(n, want) {
				return x, nil
			}
		}
	}
	// Offer each entry once, under its primary name, scored by its best name.
	var all []string
	primary := map[string]string{}
	for _, x := range list {
		ns := names(x)
		for _, n := range ns {
			all = append(all, normalize(n))
			if _, ok := primary[normalize(n)]; !ok {
				primary[normalize(n)] = ns[0]
			}
		}
	}
	var closest []string
	seen := map[string]bool{}
	for _, n := range suggest.Closest(want, all, len(all)) {
		if p := primary[n]; !seen[p] && len(closest) < 3 {
			seen[p] = true
			closest = append(closest, p)
		}
	}
	return nil, &NotFoundError{Kind: kind, Name: name, Closest: closest}
}

// Model finds a model by name, alias or Hugging Face id.
func (c *Catalog) Model(name string) (*Model, error) {
	return find("model", name, c.Models, func(m *Model) []string {
		return append(append([]string{m.Name}, m.Aliases...), m.HFID)
	})
}

// Link finds a link by name or alias.
func (c *Catalog) Link(name string) (*Link, error) {
	return find("link", name, c.Links, func(l *Link) []string { return append([]string{l.Name}, l.Aliases...) })
}

// GPU finds a GPU by name, alias or GPU feature discovery product label.
func (c *Catalog) GPU(name string) (*GPU, error) {
	return find("gpu", name, c.GPUs, func(g *GPU) []string { return append(append([]string{g.Name}, g.Aliases...), g.GPUProduct) })
}

// Engine finds a serving engine by name, at the newest version the catalog
// knows of it.
func (c *Catalog) Engine(name string) (*Engine, error) {
	e, _, err := c.EngineVersion(name, "")
	return e, err
}

// EngineVersion finds the entry of engine name whose version range holds
// ver, and returns it with the version it resolved: ver itself, or, when
// ver is "", the newest release any entry of that name lists.
func (c *Catalog) EngineVersion(name, ver string) (*Engine, string, error) {
	first, err := find("engine", name, c.Engines, func(e *Engine) []string { return []string{e.Name} })
	if err != nil {
		return nil, "", err
	}
	var entries []*Engine
	for _, e := range c.Engines {
		if e.Name == first.Name {
			entries = append(entries, e)
		}
	}
	if ver == "" {
		var best *Engine
		var bestV version
		for _, e := range entries {
			if n := e.Newest(); n != "" {
				v, _ := parseVersion(n)
				if best == nil || bestV.less(v) {
					best, bestV, ver = e, v, n
				}
			}
		}
		if best == nil { // no entry lists a release: the last range
			return entries[len(entries)-1], "", nil
		}
		return best, ver, nil
	}
	v, ok := parseVersion(ver)
	if !ok {
		return nil, "", fmt.Errorf("engine version %q is not a version such as 0.19.0", ver)
	}
	for _, e := range entries {
		if e.holds(v) {
			return e, ver, nil
		}
	}
	var ranges []string
	for _, e := range entries {
		ranges = append(ranges, e.Range())
	}
	return nil, "", fmt.Errorf("%s %s: the catalog has no profile for this version (it has %s); add an [[engine]] entry with min_version/below_version in a user catalog",
		first.Name, ver, strings.Join(ranges, "; "))
}
