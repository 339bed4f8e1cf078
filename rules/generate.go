package rules

// The default pack is compiled in as Go values (default_gen.go) rather than
// parsed from default.toml on every run of kvplan check: the parse was a
// third of a check's time from main to exit. The same file holds the
// programs expr compiles from the pack's when and deny_when (precompiled.go)
// and the driver table of data/cuda_drivers.toml. After editing either TOML
// file, or upgrading expr, regenerate it with
//
//	go generate ./rules
//
// The generator builds with the tag kvplan_rules_toml, which swaps
// default_gen.go for default_toml.go (the TOML parse), so it runs even when
// the generated file no longer compiles. TestDefaultPackGenerated,
// TestDriverTableGenerated, TestPrecompiledDefaultPrograms and packgen's
// TestGeneratedFileCurrent fail while default_gen.go is stale.

//go:generate go run -tags kvplan_rules_toml ./internal/packgen -o default_gen.go
