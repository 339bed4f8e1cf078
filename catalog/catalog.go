// Package catalog holds kvplan's reference data: model architectures, links,
// GPUs and serving engines. The embedded TOML files under data/ are the
// default; user catalogs (every *.toml file of a directory) are merged over
// them, a user entry replacing an embedded entry of the same name. Every entry
// is validated on load, and every problem names the file, line and field.
// The catalog does no arithmetic beyond parsing units.
package catalog

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kvplan/kvplan/internal/safefile"
	"github.com/kvplan/kvplan/internal/tomlpos"
)

//go:embed data/*.toml
var embedded embed.FS

// EnvVar names the environment variable that lists user catalog directories,
// separated by the OS path-list separator.
const EnvVar = "KVPLAN_CATALOG"

// Catalog is the merged set of entries, each kind sorted by name.
type Catalog struct {
	Models       []*Model
	Links        []*Link
	GPUs         []*GPU
	Engines      []*Engine
	Efficiencies []*Efficiency // keyed by GPU × engine × dtype, sorted by key
	Instances    []*Instance   // instance types and their prices, by name (provider/type)
}

// fileData is the shape of one catalog file: any mix of the four kinds.
type fileData struct {
	Models       []Model      `toml:"model"`
	Links        []Link       `toml:"link"`
	GPUs         []GPU        `toml:"gpu"`
	Engines      []Engine     `toml:"engine"`
	Efficiencies []Efficiency `toml:"efficiency"`
	Instances    []Instance   `toml:"instance"`
}

// Load returns the embedded catalog with each user directory merged over it,
// in order. The embedded entries come from embedded_gen.go, Go code
// generated from data/*.toml by `go generate ./catalog`, so that a run does
// not parse TOML; a test fails when that file is stale. The entries are
// shared by every Load (the slices are the caller's own): copy an entry
// before changing it.
func Load(userDirs ...string) (*Catalog, error) {
	c, err := embeddedCatalog()
	if err != nil {
		return nil, err
	}
	added := false
	for _, dir := range userDirs {
		if dir == "" {
			continue
		}
		if err := c.addDir(dir); err != nil {
			return nil, err
		}
		added = true
	}
	if added { // the embedded entries come sorted (TestLoadSorted)
		c.sort()
		if err := c.checkInstanceGPUs(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// LoadEmbeddedTOML parses the embedded data/*.toml files (and nothing
// else), validating every entry as a user catalog is. It is the source of
// embedded_gen.go: the generator and the staleness test call it.
func LoadEmbeddedTOML() (*Catalog, error) {
	c := &Catalog{}
	names, err := fs.Glob(embedded, "data/*.toml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	for _, n := range names {
		data, err := embedded.ReadFile(n)
		if err != nil {
			return nil, err
		}
		if err := c.addFile("(embedded)/"+strings.TrimPrefix(n, "data/"), data); err != nil {
			return nil, err
		}
	}
	c.sort()
	if err := c.checkInstanceGPUs(); err != nil {
		return nil, err
	}
	return c, nil
}

// Parse reads one catalog file's bytes into a catalog of its own, without the
// embedded entries. Tests and `models import` use it to check an entry.
func Parse(file string, data []byte) (*Catalog, error) {
	c := &Catalog{}
	if err := c.addFile(file, data); err != nil {
		return nil, err
	}
	c.sort()
	return c, nil
}

func (c *Catalog) addDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("catalog directory %s: %w (set --catalog or %s to a directory of *.toml files)", dir, err, EnvVar)
	}
	files := []string{dir}
	if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(dir, "*.toml"))
		if err != nil {
			return err
		}
		sort.Strings(files)
	}
	for _, f := range files {
		data, err := safefile.ReadFile(f, safefile.Catalog)
		if err != nil {
			return fmt.Errorf("read catalog: %w", err)
		}
		if err := c.addFile(f, data); err != nil {
			return err
		}
	}
	return nil
}

type fieldErr struct {
	field string
	msg   string
}

func (c *Catalog) addFile(file string, data []byte) error {
	var fd fileData
	idx, err := tomlpos.DecodeStrict(file, data, &fd)
	if err != nil {
		return err
	}
	check := func(kind string, i int, name string, errs []fieldErr) error {
		if name == "" {
			return &tomlpos.Error{File: file, Line: idx.InArray(kind, i), Field: kind + ".name", Msg: "missing: every entry needs a name"}
		}
		if len(errs) == 0 {
			return nil
		}
		e := errs[0]
		path := strings.Split(e.field, ".")
		return &tomlpos.Error{File: file, Line: idx.InArray(kind, i, path...),
			Field: fmt.Sprintf("%s %q: %s", kind, name, e.field), Msg: e.msg}
	}
	for i := range fd.Models {
		m := &fd.Models[i]
		m.Name = strings.ToLower(m.Name)
		if err := check("model", i, m.Name, append(m.validate(), numberErrs(m)...)); err != nil {
			return err
		}
		m.File, m.Line = file, idx.InArray("model", i)
		c.Models = replace(c.Models, m, func(x *Model) string { return x.Name })
	}
	for i := range fd.Links {
		l := &fd.Links[i]
		l.Name = strings.ToLower(l.Name)
		if err := check("link", i, l.Name, append(l.validate(), numberErrs(l)...)); err != nil {
			return err
		}
		l.File, l.Line = file, idx.InArray("link", i)
		c.Links = replace(c.Links, l, func(x *Link) string { return x.Name })
	}
	for i := range fd.GPUs {
		g := &fd.GPUs[i]
		g.Name = strings.ToLower(g.Name)
		if err := check("gpu", i, g.Name, append(g.validate(), numberErrs(g)...)); err != nil {
			return err
		}
		g.File, g.Line = file, idx.InArray("gpu", i)
		c.GPUs = replace(c.GPUs, g, func(x *GPU) string { return x.Name })
	}
	for i := range fd.Engines {
		e := &fd.Engines[i]
		e.Name = strings.ToLower(e.Name)
		if err := check("engine", i, e.Name, append(e.validate(), numberErrs(e)...)); err != nil {
			return err
		}
		if err := check("engine", i, e.Name, e.resolve()); err != nil {
			return err
		}
		e.File, e.Line = file, idx.InArray("engine", i)
		// One entry per name and version range: a user entry replaces the
		// embedded entry of the same name that starts at the same version.
		c.Engines = replace(c.Engines, e, func(x *Engine) string { return x.Name + "@" + x.MinVersion })
	}
	for i := range fd.Efficiencies {
		e := &fd.Efficiencies[i]
		e.GPU, e.Engine, e.Dtype = strings.ToLower(e.GPU), strings.ToLower(e.Engine), strings.ToLower(e.Dtype)
		if err := check("efficiency", i, e.Key(), e.validate()); err != nil {
			return err
		}
		e.File, e.Line = file, idx.InArray("efficiency", i)
		c.Efficiencies = replace(c.Efficiencies, e, (*Efficiency).Key)
	}
	for i := range fd.Instances {
		in := &fd.Instances[i]
		in.Name = strings.ToLower(in.Name)
		if err := check("instance", i, in.Name, append(in.validate(), numberErrs(in)...)); err != nil {
			return err
		}
		in.File, in.Line = file, idx.InArray("instance", i)
		c.Instances = replace(c.Instances, in, func(x *Instance) string { return x.Name })
	}
	return nil
}

// replace appends v, or replaces the entry of the same name.
func replace[T any](list []*T, v *T, name func(*T) string) []*T {
	for i, x := range list {
		if name(x) == name(v) {
			list[i] = v
			return list
		}
	}
	return append(list, v)
}

func (c *Catalog) sort() {
	sort.Slice(c.Models, func(i, j int) bool { return c.Models[i].Name < c.Models[j].Name })
	sort.Slice(c.Links, func(i, j int) bool { return c.Links[i].Name < c.Links[j].Name })
	sort.Slice(c.GPUs, func(i, j int) bool { return c.GPUs[i].Name < c.GPUs[j].Name })
	sort.SliceStable(c.Engines, func(i, j int) bool {
		a, b := c.Engines[i], c.Engines[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.hasMin && (!b.hasMin || a.minV.less(b.minV)) || !a.hasMin && b.hasMin
	})
	sort.Slice(c.Efficiencies, func(i, j int) bool { return c.Efficiencies[i].Key() < c.Efficiencies[j].Key() })
	sort.Slice(c.Instances, func(i, j int) bool { return c.Instances[i].Name < c.Instances[j].Name })
}
