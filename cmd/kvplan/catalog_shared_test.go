package main

import (
	"fmt"
	"os"
	"reflect"
	"testing"

	"github.com/kvplan/kvplan/catalog"
)

// TestMain runs the tests, which run every command on many inputs, and then
// checks that none of them changed an entry of the embedded catalog: the
// entries are shared package data (catalog/embedded_gen.go), not built
// afresh for each Load.
func TestMain(m *testing.M) {
	if os.Getenv("KVPLAN_TEST_MAIN") == "1" { // the test binary as the kvplan command (TestGitHubActionRuns)
		os.Exit(run(append([]string{"kvplan"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	code := m.Run()
	if code == 0 {
		if err := embeddedUnchanged(); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func embeddedUnchanged() error {
	got, err := catalog.Load()
	if err != nil {
		return err
	}
	want, err := catalog.LoadEmbeddedTOML()
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("a command changed an entry of the embedded catalog (shared by every catalog.Load): copy an entry before changing it")
	}
	return nil
}
