// Command embedgen writes catalog/embedded_gen.go: the embedded catalog
// (data/*.toml, parsed and validated) as Go composite literals, so that
// kvplan does not parse TOML on every run. Run it through
//
//	go generate ./catalog
//
// which builds it with the tag kvplan_catalog_toml (the catalog package then
// parses its TOML instead of using the generated file, so a stale file that
// no longer compiles can still be replaced).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/kvplan/kvplan/catalog"
)

func main() {
	out := flag.String("o", "embedded_gen.go", "file to write")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintf(os.Stderr, "embedgen: %v\n", err)
		os.Exit(1)
	}
}

func write(path string) error {
	c, err := catalog.LoadEmbeddedTOML()
	if err != nil {
		return err
	}
	src, err := Render(c)
	if err != nil {
		return err
	}
	return os.WriteFile(path, src, 0o644)
}
