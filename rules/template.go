package rules

import (
	"errors"
	"fmt"
	"strings"

	"github.com/expr-lang/expr/vm"
)

// A message or fix is a template: text with ${expr} placeholders. Each
// placeholder is an expr expression over Env (and its helpers), compiled
// when the pack loads, and replaced by its value when the rule fires:
//
//	"needs ${bytes(pool.host_required_bytes)}, limit ${bytes(pool.host_limit_bytes)}"
//
// Strings print as they are, integers in full, other numbers with at most two
// decimals (three significant digits below 1), booleans as true/false and
// lists joined with commas. Use the format helpers (bytes, rate, dur,
// percent, num, tokens) to show units. "$$" writes a literal "$".
type template struct {
	parts []templatePart
}

type templatePart struct {
	text string
	prog *vm.Program // nil for a text part
}

// compileTemplates compiles the rule's message and fix.
func (r *Rule) compileTemplates() error {
	var errs []error
	var err error
	if r.message, err = r.compileTemplate("message", r.Message, r.messagePos); err != nil {
		errs = append(errs, err)
	}
	if r.fix, err = r.compileTemplate("fix", r.Fix, r.fixPos); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return joinErrors(errs)
	}
	return nil
}

// templates makes sure the message and fix are compiled: at load for a
// rule of a user pack, here, once, for a default rule (Rule.embedded).
func (r *Rule) templates() error {
	d := r.deferred
	if d == nil {
		return nil
	}
	d.once.Do(func() { d.err = r.compileTemplates() })
	return d.err
}

func (r *Rule) compileTemplate(field, src string, pos exprPos) (template, error) {
	var t template
	var text strings.Builder
	var errs []error
	for i := 0; i < len(src); {
		switch {
		case strings.HasPrefix(src[i:], "$$"):
			text.WriteByte('$')
			i += 2
		case strings.HasPrefix(src[i:], "${"):
			end := placeholderEnd(src, i+2)
			if end < 0 {
				line, col := offsetPos(src, i, pos)
				errs = append(errs, &CompileError{File: r.File, Line: line, Col: col, RuleID: r.ID, Field: field,
					Msg: "unclosed ${: end the placeholder with }, or write $$ for a literal $"})
				i = len(src)
				continue
			}
			if text.Len() > 0 {
				t.parts = append(t.parts, templatePart{text: text.String()})
				text.Reset()
			}
			line, col := offsetPos(src, i+2, pos)
			prog, err := r.compileExpr(field, src[i+2:end], exprPos{line: line, col: col}, anyConfig())
			if err != nil {
				var ce *CompileError
				if errors.As(err, &ce) && ce.Msg != "" {
					ce.Msg = fmt.Sprintf("placeholder ${%s}: %s", src[i+2:end], ce.Msg)
				}
				errs = append(errs, err)
			}
			t.parts = append(t.parts, templatePart{prog: prog})
			i = end + 1
		default:
			text.WriteByte(src[i])
			i++
		}
	}
	if text.Len() > 0 {
		t.parts = append(t.parts, templatePart{text: text.String()})
	}
	if len(errs) > 0 {
		return template{}, joinErrors(errs)
	}
	return t, nil
}

// placeholderEnd returns the index of the } closing a placeholder whose
// expression starts at i, skipping braces inside the expression and inside
// quoted strings; -1 when there is none.
func placeholderEnd(s string, i int) int {
	depth := 0
	var quote byte
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// offsetPos turns a byte offset into a template into a file line and column,
// given where the template's value starts.
func offsetPos(src string, off int, pos exprPos) (line, col int) {
	if pos.line == 0 {
		return 0, 0
	}
	before := src[:off]
	nl := strings.Count(before, "\n")
	if nl == 0 {
		if pos.col == 0 {
			return pos.line, 0
		}
		return pos.line, pos.col + off
	}
	return pos.line + nl, off - strings.LastIndex(before, "\n")
}

// render evaluates the placeholders against env with machine m.
func (t template) render(m *vm.VM, env *Env) (string, error) {
	if len(t.parts) == 1 && t.parts[0].prog == nil {
		return t.parts[0].text, nil
	}
	var b strings.Builder
	for _, p := range t.parts {
		if p.prog == nil {
			b.WriteString(p.text)
			continue
		}
		v, err := m.Run(p.prog, env)
		if err != nil {
			return "", err
		}
		if mt := meterOf(env); mt != nil { // a list of big strings prints big
			if err := mt.charge(sizeOf(v, mt.b.Bytes-mt.bytes)); err != nil {
				return "", err
			}
		}
		b.WriteString(formatValue(v))
	}
	return b.String(), nil
}
