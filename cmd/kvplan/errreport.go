package main

import (
	"errors"
	"io"
	"strings"

	"github.com/kvplan/kvplan/internal/tomlpos"
	"github.com/kvplan/kvplan/report"
)

// countingWriter remembers whether anything was written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// requestedFormat is the -o / --output value of a command line, lowercased
// as every command takes it (-o SARIF is sarif); "" when none is given. It
// stops at "--", after which the words are an engine's command line.
func requestedFormat(args []string) string {
	format := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, name := range []string{"-o", "--output", "-output"} {
			switch {
			case a == name && i+1 < len(args):
				format = args[i+1]
			case strings.HasPrefix(a, name+"="):
				format = strings.TrimPrefix(a, name+"=")
			}
		}
	}
	return strings.ToLower(strings.TrimSpace(format))
}

// commandWords names the command a line runs: "kvplan check", "kvplan
// rules test"; the words before the first flag or argument that is not a
// command name.
func commandWords(args []string) string {
	words := []string{"kvplan"}
	cmds := commands
	if len(args) > 1 {
		for _, c := range cmds {
			if c.name == args[1] {
				words = append(words, c.name)
				if len(args) > 2 && !strings.HasPrefix(args[2], "-") && len(args[2]) < 20 && c.name != "check" && c.name != "diff" {
					words = append(words, args[2]) // a group's subcommand: rules test, models show
				}
				break
			}
		}
	}
	return strings.Join(words, " ")
}

// errorReport turns a run's error into the report CI formats carry: one
// problem per joined error, each at its file, line and column when the
// error knows them (a plan file's or manifest's key).
func errorReport(args []string, err error, code int) report.ErrorReport {
	r := report.ErrorReport{Command: commandWords(args), ExitCode: code}
	for _, e := range flatten(err) {
		p := report.Problem{Message: oneLine(e.Error())}
		var at *tomlpos.Error
		if errors.As(e, &at) {
			p.File, p.Line, p.Col, p.Field = at.File, at.Line, at.Col, at.Field
		} else if f := inputNamed(args, p.Message); f != "" {
			p.File = f // the file the error is about (a missing or unreadable plan), without a line
		}
		r.Problems = append(r.Problems, p)
	}
	return r
}

// writeErrorReport writes, for a run that failed with code 2 or 3 under a
// CI format and printed nothing yet, that format's error report to stdout.
func writeErrorReport(stdout *countingWriter, args []string, err error, code int) {
	if stdout.n > 0 {
		return // the command wrote its own output; do not append a second document
	}
	format := requestedFormat(args)
	for _, f := range report.ErrorFormats() {
		if f == format {
			_ = report.WriteError(stdout, format, errorReport(args, err, code)) // stderr has the error already
			return
		}
	}
}

// inputNamed is the file argument of check or diff that an error message
// names, or "".
func inputNamed(args []string, msg string) string {
	if len(args) < 3 || (args[1] != "check" && args[1] != "diff") {
		return ""
	}
	for _, a := range args[2:] {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") && strings.Contains(msg, a) && strings.ContainsAny(a, "./") {
			return a
		}
	}
	return ""
}
