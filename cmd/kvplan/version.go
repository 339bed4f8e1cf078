package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version and commit may be set at build time:
//
//	go build -ldflags "-X main.version=v0.4.0 -X main.commit=$(git rev-parse --short HEAD)" ./cmd/kvplan
//
// Otherwise they come from the build information Go stamps into the binary
// (the module version of `go install ...@v0.4.0`, the VCS revision of a
// build inside a git checkout).
var (
	version = ""
	commit  = ""
)

// buildInfo is what `kvplan --version` prints.
type buildInfo struct {
	Version   string // v0.4.0, or "devel" for a build from a checkout
	Commit    string // short revision, "" when unknown
	Time      string // commit time, RFC 3339
	Modified  bool   // the checkout had uncommitted changes
	GoVersion string // go1.26.8
	Platform  string // linux/amd64
	Tags      string // build tags, e.g. urfave_cli_no_docs,osusergo,minimal
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Commit: commit, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			case "-tags":
				b.Tags = s.Value
			}
		}
	}
	if b.Version == "" {
		b.Version = "devel"
	}
	if len(b.Commit) > 12 {
		b.Commit = b.Commit[:12]
	}
	return b
}

// String is the first line of --version: "kvplan v0.4.0 (commit 1a2b3c4d5e6f, 2026-11-30T10:00:00Z)".
func (b buildInfo) String() string {
	var meta []string
	if b.Commit != "" {
		c := "commit " + b.Commit
		if b.Modified {
			c += " with local changes"
		}
		meta = append(meta, c)
	}
	if b.Time != "" {
		meta = append(meta, b.Time)
	}
	s := "kvplan " + b.Version
	if len(meta) > 0 {
		s += " (" + strings.Join(meta, ", ") + ")"
	}
	return s
}

// writeVersion prints the version, the commit and the Go toolchain.
func writeVersion(w io.Writer) {
	b := readBuildInfo()
	fmt.Fprintln(w, b.String())
	tags := b.Tags
	if tags == "" {
		tags = "none (a release build uses -tags " + releaseBuildTags + ")"
	}
	fmt.Fprintf(w, "built with %s for %s; build tags: %s\n", b.GoVersion, b.Platform, tags)
}

// releaseBuildTags are the tags of a release build (README: Install). They
// change start-up time, not output.
const releaseBuildTags = "urfave_cli_no_docs,osusergo,minimal"
