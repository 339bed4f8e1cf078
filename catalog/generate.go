package catalog

// The embedded catalog is compiled in as Go values (embedded_gen.go) rather
// than parsed from TOML on every run: parsing data/*.toml took about a third
// of a one-shot command. After editing data/*.toml, regenerate it with
//
//	go generate ./catalog
//
// The generator builds with the tag kvplan_catalog_toml, which swaps
// embedded_gen.go for embedded_toml.go (the TOML parse), so it runs even
// when the generated file no longer compiles (a field was removed).
// TestEmbeddedGenerated fails while embedded_gen.go is stale.

//go:generate go run -tags kvplan_catalog_toml ./internal/embedgen -o embedded_gen.go
