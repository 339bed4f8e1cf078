package main

import (
	"regexp"
	_ "unsafe" // go:linkname
)

// urfaveCommaWhitespace is urfave/cli's v1-migration regexp, "[, ]+.*":
// every Names() of every flag (cli.FlagNames) runs it on each name to cut a
// v1-style "name, alias" string at the comma. A disagg run asks for names
// 121 times (parsing its flags, normalising them, IsSet), and the regexp,
// which has no literal to search for, tries a match at every byte of every
// name: 0.31 µs a call, 22 µs of the 0.45 ms from main to exit on a cold
// start (the regexp engine's code is first run there).
//
// kvplan's names have no comma or space (TestUrfaveNames), so the regexp
// never matches them. init swaps it for ",.*", which cuts a v1 string the
// same way and, starting with a literal, is rejected by one IndexByte
// (0.08 µs). The variable is reached with go:linkname, as plotfonts reaches
// gonum's; if urfave/cli renames it, this variable is kvplan's own, the
// swap does nothing, names come out the same, and TestUrfaveNames fails.
//
//go:linkname urfaveCommaWhitespace github.com/urfave/cli/v2.commaWhitespace
var urfaveCommaWhitespace *regexp.Regexp

func init() { urfaveCommaWhitespace = regexp.MustCompile(",.*") }
