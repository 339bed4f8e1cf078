package manifest

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/kvplan/kvplan/internal/safetext"
	"github.com/kvplan/kvplan/planfile"
	"github.com/kvplan/kvplan/units"
)

// The shell reader. A container's `sh -c SCRIPT`, an env variable that
// holds engine arguments (KServe's VLLM_ADDITIONAL_ARGS) and kvplan
// memory's --vllm-args are parsed as the shell would parse them
// (mvdan.cc/sh) and expanded with the container's env and the script's own
// assignments. Nothing is ever run: command and process substitutions are
// refused at their place, globbing is off, and the machine's environment
// and users are never read (`~user` stays as written). The work is bounded
// before it is done:
//
//	a script (or env value) of at most maxScriptBytes (64 KiB);
//	brackets, parentheses and braces nested at most maxShellNesting (64) deep,
//	  checked before parsing: the parser recurses once a level, and 200,000
//	  levels overflowed Go's 1 GB stack;
//	each word (and each assignment) expanding to at most maxWordBytes
//	  (64 KiB), from an upper bound computed before it is expanded, so
//	  `A=$A$A` in a row stops at the first value over the cap, not at 1.75 GB;
//	the script's expansions at most maxExpansionBytes (256 KiB) in all;
//	pattern operations (${A//x/y}, ${A%%x}, ${A^^x}) at most
//	  maxPatternWork bytes of value × bytes of pattern in all (the engine
//	  behind them matches in time proportional to that product).
//
// A script over a bound is not read: one finding at the place says which
// bound and by how much, and the worker it starts is not reviewed.
const (
	maxScriptBytes    = 64 << 10
	maxShellNesting   = 64
	maxWordBytes      = 64 << 10
	maxExpansionBytes = 256 << 10
	maxPatternWork    = 1 << 26
)

// shell reads one script for one worker.
type shell struct {
	r    *reader
	w    *worker
	what string // "the shell command", "VLLM_ADDITIONAL_ARGS"
	at   func(off int) planfile.Pos
	env  *scriptEnv
	cfg  *expand.Config
	// expanded counts the bytes expanded so far; work the pattern work.
	expanded float64
	work     float64
	refused  bool
	// badArith is set by wordBound when the word holds arithmetic the
	// expander cannot evaluate (it panics on `--(1)`): the word is then not
	// expanded.
	badArith bool
}

// newShell starts reading a script of w's, placed by at (a byte offset of
// the script to its place in the file), with the container's env.
func (r *reader) newShell(w *worker, what string, at func(off int) planfile.Pos) *shell {
	env := &scriptEnv{vars: map[string]string{}}
	for k, v := range w.env {
		if !v.fromRef {
			env.vars[k] = v.value
		}
	}
	s := &shell{r: r, w: w, what: what, at: at, env: env}
	s.cfg = s.config()
	return s
}

// config is the expander's configuration: the script's env, and handlers
// that refuse command and process substitutions (without them the expander
// dereferenced a nil function: exit 3).
func (s *shell) config() *expand.Config {
	return &expand.Config{Env: s.env,
		CmdSubst:  func(io.Writer, *syntax.CmdSubst) error { return errCmdSubst },
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return "", errProcSubst },
	}
}

var (
	errCmdSubst  = errors.New("a command substitution ($(...) or `...`), which kvplan never runs")
	errProcSubst = errors.New("a process substitution (<(...) or >(...)), which kvplan never runs")
	errExpander  = errors.New("a word the shell expander kvplan uses cannot evaluate")
)

// expandSafely runs one expansion and turns a panic of the expander into
// errExpander. mvdan.cc/sh's expander asserts things its parser lets
// through; FuzzShellWords found two: an arithmetic operand that is not a
// name (${A: --s---m}), and a ${A%pattern} whose translated regular
// expression does not compile (${A%[[-\H]}: regexp.MustCompile in
// removePattern). The
// configuration is made afresh after one, in case the expander left state.
func (s *shell) expandSafely(f func() error) (err error) {
	defer func() {
		if recover() != nil {
			err = errExpander
			s.cfg = s.config()
		}
	}()
	return f()
}

// refuse reports that the script is not read, at byte off of it.
func (s *shell) refuse(off int, msg, fix string) {
	if s.refused {
		return
	}
	s.refused = true
	f := Finding{ID: IDBadValue, Severity: Deny, At: s.at(off), Pool: s.w.name,
		Message: s.w.name + ": " + msg,
		Why:     "kvplan reads the engine's arguments from the shell script without running it; it cannot read this one, so the worker it starts is not reviewed",
		Fix:     fix}
	s.w.findings = append(s.w.findings, f)
	s.r.scriptErrors = append(s.r.scriptErrors, scriptError{w: s.w, f: f})
}

// parse parses text, or refuses it (one finding) and returns nil.
func (s *shell) parse(text string) *syntax.File {
	if len(text) > maxScriptBytes {
		s.refuse(0, fmt.Sprintf("%s is %s bytes, over the %s kvplan reads", s.what, units.Thousands(int64(len(text))), units.Bytes(maxScriptBytes)),
			"move the engine's arguments into the container's args, or shorten the script")
		return nil
	}
	if off, deeper := nesting(text, maxShellNesting); deeper {
		s.refuse(off, fmt.Sprintf("%s nests brackets more than %d deep, the most kvplan parses", s.what, maxShellNesting),
			"write the command without the nesting")
		return nil
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil {
		off, msg := 0, err.Error()
		var pe syntax.ParseError
		if errors.As(err, &pe) {
			off, msg = int(pe.Pos.Offset()), pe.Text
		}
		s.refuse(off, fmt.Sprintf("%s does not parse: %s", s.what, safetext.Clip(msg, 200)), "fix the script's quoting")
		return nil
	}
	return f
}

// nesting reports whether brackets, parentheses and braces nest deeper
// than limit in text (quoted or not: a bound, not a parse), and the offset
// of the first one too deep.
func nesting(text string, limit int) (at int, deeper bool) {
	d := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '(', '{', '[':
			if d++; d > limit {
				return i, true
			}
		case ')', '}', ']':
			d = max(0, d-1)
		}
	}
	return 0, false
}

// assign sets a script variable (A=x, A+=x, export A=x), unless the value
// is over a bound (then the script is refused) or a substitution (then the
// variable stays unset).
func (s *shell) assign(a *syntax.Assign) {
	if s.refused || a.Name == nil || a.Value == nil {
		return
	}
	s.badArith = false
	bound := s.wordBound(a.Value)
	if s.badArith {
		return // the shell would stop at it: the variable stays unset
	}
	if a.Append {
		bound += float64(len(s.env.vars[a.Name.Value]))
	}
	if !s.charge(int(a.Pos().Offset()), bound, "$"+a.Name.Value) {
		return
	}
	var v string
	if err := s.expandSafely(func() (err error) { v, err = expand.Literal(s.cfg, a.Value); return err }); err != nil {
		return
	}
	if a.Append {
		v = s.env.vars[a.Name.Value] + v
	}
	s.env.vars[a.Name.Value] = v
	s.expanded += float64(len(v))
}

// charge checks an expansion of at most bound bytes at byte off against
// the bounds before it is done; false means the script is refused.
func (s *shell) charge(off int, bound float64, what string) bool {
	if s.refused {
		return false
	}
	switch {
	case bound > maxWordBytes:
		s.refuse(off, fmt.Sprintf("%s of %s could expand to %s bytes, more than the %s kvplan expands a word (a variable doubled again and again?)",
			what, s.what, approxBytes(bound), units.Bytes(maxWordBytes)), "write the value out, or shorten it")
	case s.expanded+bound > maxExpansionBytes:
		s.refuse(off, fmt.Sprintf("%s expands to more than %s in all, the most kvplan expands of a script", s.what, units.Bytes(maxExpansionBytes)),
			"move the engine's arguments into the container's args, or shorten the script")
	case s.work > maxPatternWork:
		s.refuse(off, fmt.Sprintf("%s matches patterns over more than %s bytes of value × bytes of pattern, the most kvplan matches in a script", s.what, approxBytes(maxPatternWork)),
			"write the value out instead of editing it with ${VAR//x/y}, ${VAR%%x} or ${VAR^^}")
	default:
		return true
	}
	return false
}

// approxBytes is a bound in bytes for a message: "65,537", "over 10^18".
func approxBytes(b float64) string {
	if b >= 1e18 || math.IsInf(b, 0) || math.IsNaN(b) {
		return "over 10^18"
	}
	return units.Thousands(int64(b))
}

// words expands one word of a command into fields, each at the word's
// place. A word the shell would get from a substitution (or stop at) is
// kept as written, opaque: its value is unknown and findings say so. ok is
// false when the script is refused.
func (s *shell) words(wd *syntax.Word) ([]word, bool) {
	off := int(wd.Pos().Offset())
	s.badArith = false
	if !s.charge(off, s.wordBound(wd), "a word") {
		return nil, false
	}
	at := s.at
	if s.badArith {
		return []word{{text: wordText(wd), at: func(d int) planfile.Pos { return at(off + d) },
			opaque: "an arithmetic expansion the shell would stop at"}}, true
	}
	var fields []string
	err := s.expandSafely(func() (err error) { fields, err = expand.Fields(s.cfg, wd); return err })
	if err != nil {
		why := err.Error()
		if !errors.Is(err, errCmdSubst) && !errors.Is(err, errProcSubst) && !errors.Is(err, errExpander) {
			why = "a word the shell would stop at (" + safetext.Clip(why, 200) + ")"
		}
		return []word{{text: wordText(wd), at: func(d int) planfile.Pos { return at(off + d) }, opaque: why}}, true
	}
	out := make([]word, len(fields))
	for i, fl := range fields {
		s.expanded += float64(len(fl))
		out[i] = word{text: fl, at: func(d int) planfile.Pos { return at(off + d) }}
	}
	return out, true
}

// wordBound is an upper bound of the bytes a word expands to, all its
// fields together (brace expansion multiplies them), with the variables
// as they are now. It also adds the pattern work the word would cost.
func (s *shell) wordBound(wd *syntax.Word) float64 {
	if wd == nil {
		return 0
	}
	c := *wd // SplitBraces replaces the parts of the word it is given
	c.Parts = append([]syntax.WordPart(nil), wd.Parts...)
	syntax.SplitBraces(&c)
	return s.partsSize(c.Parts).total()
}

// size bounds an expansion: at most fields fields of at most bytes each.
type size struct{ fields, bytes float64 }

// total is the bytes of the fields joined by single spaces.
func (z size) total() float64 { return z.fields*z.bytes + max(0, z.fields-1) }

func (s *shell) partsSize(parts []syntax.WordPart) size {
	z := size{fields: 1}
	for i, p := range parts {
		ps := s.partSize(p, i == 0)
		z.fields *= ps.fields
		z.bytes += ps.bytes
	}
	return z
}

func (s *shell) partSize(p syntax.WordPart, first bool) size {
	switch p := p.(type) {
	case *syntax.Lit:
		n := float64(len(p.Value))
		if first && strings.HasPrefix(p.Value, "~") {
			n += float64(len(s.env.vars["HOME"]))
		}
		return size{1, n}
	case *syntax.SglQuoted:
		return size{1, float64(len(p.Value))}
	case *syntax.DblQuoted:
		return size{1, s.partsSize(p.Parts).total()}
	case *syntax.ParamExp:
		return size{1, s.paramSize(p)}
	case *syntax.ArithmExp:
		s.arithWork(p.X)
		return size{1, 20}
	case *syntax.CmdSubst, *syntax.ProcSubst:
		return size{1, 0} // refused by the handlers: the word is kept as written
	case *syntax.ExtGlob:
		return size{1, float64(len(p.Pattern.Value)) + 3}
	case *syntax.BraceExp:
		if p.Sequence {
			return s.sequenceSize(p)
		}
		z := size{}
		for _, e := range p.Elems {
			ez := s.partsSize(e.Parts)
			z.fields += ez.fields
			z.bytes = max(z.bytes, ez.bytes)
		}
		return z
	}
	return size{1, math.Inf(1)} // a part this reader does not know: refused
}

// sequenceSize bounds {x..y[..step]}: as many fields as the range holds.
func (s *shell) sequenceSize(b *syntax.BraceExp) size {
	from, to := b.Elems[0].Lit(), b.Elems[1].Lit()
	var lo, hi float64
	if _, err := fmt.Sscan(from, &lo); err != nil || len(from) == 0 {
		lo, hi = 0, 256 // a character range
	} else if _, err := fmt.Sscan(to, &hi); err != nil {
		lo, hi = 0, 256
	}
	return size{math.Abs(hi-lo) + 1, float64(max(len(from), len(to), 20))}
}

// paramSize bounds one parameter expansion and adds its pattern work.
func (s *shell) paramSize(pe *syntax.ParamExp) float64 {
	var base float64
	switch {
	case pe.Param == nil:
	case pe.Length:
		return 20
	case pe.Excl || pe.Names != 0:
		base = s.env.bytes() // ${!A}, ${!prefix*}: any variable, or all names
	default:
		if v, ok := s.env.vars[pe.Param.Value]; ok {
			base = float64(len(v))
		} else {
			base = 20 // $$, $#, $1 ...
		}
	}
	if pe.Index != nil {
		s.arithWork(pe.Index)
	}
	if pe.Slice != nil {
		s.arithWork(pe.Slice.Offset)
		s.arithWork(pe.Slice.Length)
	}
	if r := pe.Repl; r != nil {
		orig, with := s.wordBound(r.Orig), s.wordBound(r.With)
		s.work += (base + 1) * (orig + 1)
		return (base+1)*with + base
	}
	if e := pe.Exp; e != nil {
		arg := s.wordBound(e.Word)
		switch e.Op {
		case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
			s.work += (base + 1) * (arg + 1)
			return base
		case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
			s.work += (base + 1) * (arg + 1)
			return 4 * base // a case change can lengthen a character's UTF-8
		case syntax.OtherParamOps:
			return 4*base + 16 // ${A@Q} quotes
		}
		return base + arg
	}
	return base
}

// arithWork adds the words inside an arithmetic expression to the work
// (each is expanded before the sum is taken), and sets badArith for an
// expression the expander would panic on: ++ or -- of anything but a name,
// an assignment to anything but a name, ?: without its :. The parser takes
// `--(1)`; FuzzShellWords found the panic.
func (s *shell) arithWork(x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Word:
			s.work += s.wordBound(n)
			return false
		case *syntax.UnaryArithm:
			if _, name := n.X.(*syntax.Word); (n.Op == syntax.Inc || n.Op == syntax.Dec) && !name {
				s.badArith = true
			}
		case *syntax.BinaryArithm:
			switch n.Op {
			case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
				syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
				if _, name := n.X.(*syntax.Word); !name {
					s.badArith = true
				}
			case syntax.TernQuest:
				if y, ok := n.Y.(*syntax.BinaryArithm); !ok || y.Op != syntax.TernColon {
					s.badArith = true
				}
			}
		}
		return true
	})
}

// scriptError is a script refused for a worker, kept so that a manifest
// whose only engine sits in a refused script says why it has no workers.
type scriptError struct {
	w *worker
	f Finding
}

// shellWords parses a shell script and returns the words of the command
// that starts an engine (the first one kvplan recognises), expanded with the
// container's env and the script's own assignments. A variable the script
// uses but nothing sets is noted; the word keeps what the shell would give
// (empty). A script refused (a bound, a parse error) returns nil with one
// finding.
func (r *reader) shellWords(w *worker, script string, node *yaml.Node) []word {
	s := r.newShell(w, "the shell command", func(off int) planfile.Pos { return r.src.at(node, off) })
	f := s.parse(script)
	if f == nil {
		return nil
	}
	var found []word
	syntax.Walk(f, func(n syntax.Node) bool {
		if found != nil || s.refused {
			return false
		}
		switch x := n.(type) {
		case *syntax.DeclClause: // export A=1
			for _, a := range x.Args {
				s.assign(a)
			}
			return false
		case *syntax.CallExpr:
			for _, a := range x.Assigns {
				s.assign(a)
			}
			var words []word
			for _, wd := range x.Args {
				ws, ok := s.words(wd)
				if !ok {
					return false
				}
				words = append(words, ws...)
			}
			if _, _, ok := identify(words); ok {
				found = words
				s.noteMissing(x.Args)
			}
			return false
		}
		return true
	})
	if s.refused {
		return nil
	}
	for _, name := range s.env.missing {
		w.note(s.at(0), "%s: the command uses $%s, which neither the container's env nor the script sets: it expands to nothing", w.name, name)
	}
	return found
}

// noteMissing lists the variables the engine's words use that nothing sets.
func (s *shell) noteMissing(args []*syntax.Word) {
	env := s.env
	for _, wd := range args {
		syntax.Walk(wd, func(n syntax.Node) bool {
			if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
				if _, set := env.vars[pe.Param.Value]; !set && !contains(env.missing, pe.Param.Value) {
					env.missing = append(env.missing, pe.Param.Value)
				}
			}
			return true
		})
	}
}

// wordText is a shell word as written, for a word the expander refuses
// (a command substitution).
func wordText(wd *syntax.Word) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, wd)
	return b.String()
}

// scriptEnv is the environment a container's shell script sees: its env
// list and its own assignments. missing lists the variables the engine's
// command line uses that nothing sets.
type scriptEnv struct {
	vars    map[string]string
	missing []string
}

func (e *scriptEnv) Get(name string) expand.Variable {
	if v, ok := e.vars[name]; ok {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
	}
	if user, ok := strings.CutPrefix(name, "HOME "); ok {
		// The expander asks for "HOME user" to expand ~user, and else looks
		// the user up on the machine kvplan runs on: ~user stays as written.
		return expand.Variable{Set: true, Kind: expand.String, Str: "~" + user}
	}
	return expand.Variable{}
}

// Each lists the variables in name order, so that ${!prefix*} expands the
// same way on every run.
func (e *scriptEnv) Each(f func(name string, vr expand.Variable) bool) {
	for _, k := range slices.Sorted(maps.Keys(e.vars)) {
		if !f(k, expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: e.vars[k]}) {
			return
		}
	}
}

// bytes is the size of every name and value, a bound of ${!A} and ${!prefix*}.
func (e *scriptEnv) bytes() float64 {
	n := 0
	for k, v := range e.vars {
		n += len(k) + len(v) + 1
	}
	return float64(n)
}
