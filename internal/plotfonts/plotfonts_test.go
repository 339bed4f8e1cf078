package plotfonts_test

import (
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"

	"github.com/kvplan/kvplan/internal/plotfonts"
)

// TestDeferred: with gonum.org/v1/plot initialised, its fonts are not
// parsed until Load, and after Load the cache holds every font plot's init
// would have added, with Liberation as the default typeface. (An external
// test: were package plotfonts itself to import gonum.org/v1/plot, it would
// be initialised after it.)
func TestDeferred(t *testing.T) {
	if font.DefaultCache.Has(plot.DefaultFont) {
		t.Fatal("gonum.org/v1/plot parsed its fonts at start-up: the deferral no longer works (did gonum.org/v1/plot/font/liberation rename its once?)")
	}
	plotfonts.Load()
	plotfonts.Load() // a second call adds nothing and parses nothing
	coll := liberation.Collection()
	if len(coll) != 12 {
		t.Fatalf("liberation.Collection() has %d fonts, want the 12 of Liberation Serif, Sans and Mono", len(coll))
	}
	for _, f := range coll {
		if !font.DefaultCache.Has(f.Font) {
			t.Errorf("the cache lacks %+v", f.Font)
		}
	}
	if got := font.DefaultCache.Lookup(font.Font{Typeface: "no such typeface", Variant: "Serif"}, 12); got.Font.Typeface != "Liberation" || got.Face == nil {
		t.Errorf("an unknown typeface falls back to %q (face %v), want Liberation", got.Font.Typeface, got.Face != nil)
	}
}
