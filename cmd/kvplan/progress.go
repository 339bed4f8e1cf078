package main

import (
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/term"

	"github.com/kvplan/kvplan/units"
)

// progressLine is the one-line progress display of a long run (kvplan
// simulate): "kv-aware · replaying [=====>     ] 1,234,567 / 2,000,000 62%",
// redrawn in place on stderr at most every progressEvery, always fitted to
// the terminal's width as it is at that moment (a line wider than the
// terminal wraps, and then every redraw adds a line), and cleared when the
// run ends. It names what runs (the policy) and the phase. It is shown only
// when both stdout and stderr are terminals: output piped to a file or a
// CI log gets no bar. A nil *progressLine does nothing, so callers need no
// checks.
//
// kvplan draws it itself (with golang.org/x/term for the width) rather than
// with a progress-bar library: schollz/progressbar imports net/http, whose
// initialisation cost every kvplan command about a millisecond at start.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	width func() int       // terminal columns now
	now   func() time.Time // the clock, for throttling
	total int64            // ≤ 0: unknown (a trace's length)
	unit  string           // "requests"
	done  int64
	name  string // what runs: "kv-aware", "6 policies"
	phase string // "replaying", "reading the trace"
	last  time.Time
	shown bool
}

// progressEvery is the shortest time between two redraws.
const progressEvery = 100 * time.Millisecond

// newProgress returns a progress line on stderr, or nil when stdout or
// stderr is not a terminal.
func newProgress(stdout, stderr io.Writer, total int64, unit string) *progressLine {
	out, ok1 := stdout.(*os.File)
	errf, ok2 := stderr.(*os.File)
	if !ok1 || !ok2 || !term.IsTerminal(int(out.Fd())) || !term.IsTerminal(int(errf.Fd())) {
		return nil
	}
	fd := int(errf.Fd())
	return &progressLine{w: errf, total: total, unit: unit, now: time.Now,
		width: func() int {
			if w, _, err := term.GetSize(fd); err == nil && w > 0 {
				return w
			}
			return 80
		}}
}

// Phase names what runs and what it does now; the line is redrawn.
func (p *progressLine) Phase(name, phase string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.phase = name, phase
	p.draw()
}

// Set records progress (done units of total) and redraws at most every
// progressEvery. It is safe to call from several goroutines.
func (p *progressLine) Set(done int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = done
	if t := p.now(); t.Sub(p.last) >= progressEvery {
		p.last = t
		p.draw()
	}
}

// Finish clears the line, leaving the terminal as it was.
func (p *progressLine) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		io.WriteString(p.w, "\r\x1b[K")
		p.shown = false
	}
}

func (p *progressLine) draw() {
	io.WriteString(p.w, "\r"+p.render(p.width())+"\x1b[K")
	p.shown = true
}

// render writes the line in fewer than width columns: the name and phase
// (cut with "…" to leave room), the count, the percentage, and a bar in
// what is left; on a narrow terminal the bar goes first, then the label.
func (p *progressLine) render(width int) string {
	room := width - 1 // the last column would wrap on some terminals
	count := units.Thousands(p.done)
	pct := ""
	if p.total > 0 {
		count += " / " + units.Thousands(p.total)
		pct = strconv.Itoa(int(min(100, p.done*100/p.total))) + "%"
	}
	if p.unit != "" {
		count += " " + p.unit
	}
	tail := strings.TrimSpace(count + " " + pct)
	if runeLen(tail) > room {
		return cut(pct, room)
	}
	label := strings.TrimSpace(p.name)
	if p.phase != "" {
		label = strings.TrimSpace(label + " · " + p.phase)
	}
	// The name and phase come first (they say what runs); the bar gets
	// what is left when that is at least minBar columns.
	const minBar, minLabel = 10, 6
	avail := room - runeLen(tail) - 1
	barRoom := 0
	if label != "" {
		maxLabel := avail - 1
		if p.total > 0 && avail-minBar-1 >= 2*minLabel {
			maxLabel = avail - minBar - 2
		}
		if maxLabel < minLabel {
			label = ""
		} else {
			label = cut(label, maxLabel)
			avail -= runeLen(label) + 1
		}
	}
	barRoom = avail
	parts := []string{}
	if label != "" {
		parts = append(parts, label)
	}
	if p.total > 0 && barRoom >= minBar {
		parts = append(parts, bar(barRoom, p.done, p.total))
	}
	return strings.Join(append(parts, tail), " ")
}

// bar is "[====>    ]" of n columns.
func bar(n int, done, total int64) string {
	inner := n - 2
	full := int(min(int64(inner), done*int64(inner)/total))
	s := strings.Repeat("=", full)
	if full < inner {
		s += ">" + strings.Repeat(" ", inner-full-1)
	}
	return "[" + s + "]"
}

// cut shortens s to at most n columns, with "…" when it cut.
func cut(s string, n int) string {
	if runeLen(s) <= n {
		return s
	}
	if n <= 1 {
		return strings.Repeat("…", max(0, n))
	}
	r := []rune(s)
	return strings.TrimRight(string(r[:n-1]), " ·") + "…"
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }
