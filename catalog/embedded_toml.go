//go:build kvplan_catalog_toml

package catalog

// embeddedCatalog parses data/*.toml. This file replaces embedded_gen.go
// under the build tag kvplan_catalog_toml, which `go generate ./catalog`
// uses to write embedded_gen.go anew.
func embeddedCatalog() (*Catalog, error) { return LoadEmbeddedTOML() }
