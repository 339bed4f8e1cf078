// Package plotfonts moves gonum.org/v1/plot's font parsing from the start of
// every kvplan command to the first plot.
//
// The init function of gonum.org/v1/plot parses the twelve Liberation fonts
// it embeds (font.DefaultCache.Add(liberation.Collection())): 0.2–0.3 ms and
// 184 KB of heap on every start, a third of a hello-world Go binary's whole
// run, for the two commands in twenty that draw an SVG. Nothing exported
// defers it, so this package does, by init order: Go initialises packages in
// import-path order as soon as their imports are (the spec, since Go 1.21),
// so this package, which sorts before gonum.org/v1/plot and imports only what
// plot imports, runs first and marks liberation.Collection's sync.Once as
// done. plot's init then adds an empty collection; Load, called before the
// first plot is made, resets the Once and adds the collection parsed by
// liberation.Collection itself, so the cache ends as plot's init would have
// left it and the SVG is byte for byte the same (report's golden SVG).
//
// The Once is reached with go:linkname. If gonum renames it, the build still
// links (this package then holds a variable of its own), plot's init parses
// the fonts again, and TestDeferred fails: start-up is slower, output the
// same.
package plotfonts

import (
	"sync"
	_ "unsafe" // go:linkname

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
)

//go:linkname liberationOnce gonum.org/v1/plot/font/liberation.once
var liberationOnce sync.Once

func init() { liberationOnce.Do(func() {}) }

var load sync.Once

// Load adds gonum.org/v1/plot's fonts to font.DefaultCache, parsing them the
// first time. Call it before plot.New; it is safe for concurrent use.
func Load() {
	load.Do(func() {
		liberationOnce = sync.Once{}
		font.DefaultCache.Add(liberation.Collection())
	})
}
