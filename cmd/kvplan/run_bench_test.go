package main

import (
	"io"
	"testing"
)

// BenchmarkRunInProcess times startupCommands inside the test process: the
// part of a start after package initialisation (flags, catalog, planner,
// tables), with its allocations. The first run of a process also pays for
// what sync.Once and pools keep, so the figures are a floor of that part;
// BenchmarkStartup is the measurement of record.
//
//	go test ./cmd/kvplan -run '^$' -bench RunInProcess -benchmem
func BenchmarkRunInProcess(b *testing.B) {
	for _, sc := range startupCommands {
		b.Run(sc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if code := run(append([]string{"kvplan"}, sc.args...), io.Discard, io.Discard); code != ExitOK && code != ExitFindings {
					b.Fatalf("%v: exit %d", sc.args, code)
				}
			}
		})
	}
}
