package planfile

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/kvplan/kvplan/internal/tomlpos"
)

// Pos is where a value of a plan was written: a file, a 1-based line and a
// 1-based column. Plan files give lines only (Col 0); a plan read from a
// Kubernetes manifest points at the argument or field itself. The zero Pos
// means "not written anywhere" (a default, or a value from a flag).
type Pos struct {
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

// IsZero reports whether p names no place.
func (p Pos) IsZero() bool { return p.File == "" && p.Line == 0 }

// String renders p as "file:line:col", "file:line" or "file" ("" for the
// zero Pos), the form editors and CI annotations understand.
func (p Pos) String() string {
	s := p.File
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
		if p.Col > 0 {
			s += ":" + strconv.Itoa(p.Col)
		}
	}
	return s
}

// positions maps dotted plan fields ("pools.prefill.memory_limit") to where
// they were written, in the order the readers found them. Both readers fill
// it: the TOML reader from the plan file's keys and tables, the manifest
// reader from YAML fields and engine arguments. Rules and reports only ask
// Plan.Pos, so they do not care where a plan came from.
type positions struct {
	at    map[string]Pos
	order []string
	below map[string]string // a table's path → the first field set below it
}

func (ps *positions) set(field string, p Pos) {
	if ps.at == nil {
		ps.at = map[string]Pos{}
		ps.below = map[string]string{}
	}
	if _, ok := ps.at[field]; !ok {
		ps.order = append(ps.order, field)
		ps.index(field)
	}
	ps.at[field] = p
}

// index records field as the first below each of its enclosing tables that
// has none yet, so Pos's fallback is a map read (a linear scan made 20,000
// pools quadratic).
func (ps *positions) index(field string) {
	for i := 0; i < len(field); i++ {
		if field[i] == '.' {
			if _, ok := ps.below[field[:i]]; !ok {
				ps.below[field[:i]] = field
			}
		}
	}
}

// SetPos records where field was written; a later call replaces the place.
// Readers call it for every value and every table they fill.
func (p *Plan) SetPos(field string, at Pos) {
	if at.IsZero() {
		return
	}
	p.pos.set(field, at)
}

// Has reports whether field itself was written (not only its table).
func (p *Plan) Has(field string) bool {
	if p == nil {
		return false
	}
	_, ok := p.pos.at[field]
	return ok
}

// Pos returns where a dotted field such as "pools.prefill.memory_limit" or
// "router.kv_events" was written. When the field itself is absent it returns
// the place of its nearest enclosing table ([pools.prefill], [router]), or
// of the first field written below it (a table written with dotted keys, or
// a manifest's pool whose service has no place of its own); the zero Pos
// when none is known.
func (p *Plan) Pos(field string) Pos {
	if p == nil || field == "" {
		return Pos{}
	}
	path := strings.Split(field, ".")
	for n := len(path); n > 0; n-- {
		key := strings.Join(path[:n], ".")
		if at, ok := p.pos.at[key]; ok {
			return at
		}
		if f, ok := p.pos.below[key]; ok {
			return p.pos.at[f]
		}
	}
	return Pos{}
}

// Line returns the line of Pos(field), 0 when unknown.
func (p *Plan) Line(field string) int { return p.Pos(field).Line }

// Fields lists every field with a place, sorted by name.
func (p *Plan) Fields() []string {
	out := append([]string(nil), p.pos.order...)
	sort.Strings(out)
	return out
}

// FieldError is err located at field: "file:line:col: field: message".
func (p *Plan) FieldError(field string, err error) error {
	at := p.Pos(field)
	if at.File == "" {
		at.File = p.Path
	}
	return &tomlpos.Error{File: at.File, Line: at.Line, Col: at.Col, Field: field, Msg: err.Error()}
}

func (p *Plan) fieldErrorf(field, format string, args ...any) *tomlpos.Error {
	return p.FieldError(field, fmt.Errorf(format, args...)).(*tomlpos.Error)
}

// Clone returns a deep copy of p: its pools and the places of its fields.
func (p *Plan) Clone() *Plan {
	c := *p
	c.Pools = make(map[string]*Pool, len(p.Pools))
	for n, pl := range p.Pools {
		cp := *pl
		c.Pools[n] = &cp
	}
	c.Transport.UCXTLS = append([]string(nil), p.Transport.UCXTLS...)
	if p.Router.KVEvents != nil {
		v := *p.Router.KVEvents
		c.Router.KVEvents = &v
	}
	c.pos = positions{order: append([]string(nil), p.pos.order...), at: make(map[string]Pos, len(p.pos.at)), below: make(map[string]string, len(p.pos.below))}
	for k, v := range p.pos.at {
		c.pos.at[k] = v
	}
	for k, v := range p.pos.below {
		c.pos.below[k] = v
	}
	return &c
}

// ClearPos forgets where field was written: a later source (a flag) replaced
// its value.
func (p *Plan) ClearPos(field string) {
	if _, ok := p.pos.at[field]; !ok {
		return
	}
	delete(p.pos.at, field)
	for i, f := range p.pos.order {
		if f == field {
			p.pos.order = append(p.pos.order[:i], p.pos.order[i+1:]...)
			break
		}
	}
	// Re-index: field may have been a table's first.
	p.pos.below = map[string]string{}
	for _, f := range p.pos.order {
		p.pos.index(f)
	}
}
