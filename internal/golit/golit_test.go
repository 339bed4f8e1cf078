package golit

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

type pos struct{ line, col int }

type withDurations struct{ D []time.Duration }

type entry struct {
	Name  string
	Tags  []string
	Sizes map[string]int
	at    pos
	Next  *entry
	Zero  int
}

// TestWrite: this package's types unqualified, unexported fields written,
// zero fields and nil pointers left out, map keys sorted, and a type of
// another package refused (the generated file imports nothing).
func TestWrite(t *testing.T) {
	var b bytes.Buffer
	v := &entry{Name: "a", Tags: []string{"x", "y"}, Sizes: map[string]int{"b": 2, "a": 1}, at: pos{line: 3, col: 7}}
	if err := Write(&b, v, "github.com/kvplan/kvplan/internal/golit"); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{`&entry{`, `Name: "a",`, `Tags: []string{"x", "y"},`, "Sizes: map[string]int{\n\"a\": 1,\n\"b\": 2,\n},", `at: pos{`, `line: 3,`, `col: 7,`} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Zero") || strings.Contains(got, "Next") {
		t.Errorf("zero fields written:\n%s", got)
	}
	b.Reset()
	if err := Write(&b, withDurations{[]time.Duration{time.Second}}, "github.com/kvplan/kvplan/internal/golit"); err == nil {
		t.Error("a []time.Duration was written; want an error (its type needs an import)")
	}
}
