package safefile

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzLineReader: the lines read back are the input split at "\n" (with a
// "\r" before it dropped), or reading stops with ErrLineTooLong at a line
// that really is over the cap.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbb\r\n\nccc"), uint8(4))
	f.Add([]byte("toolongline\nx"), uint8(3))
	f.Add([]byte("\r\r\n\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, max uint8) {
		limit := int(max%64) + 1
		want := bytes.Split(data, []byte("\n"))
		if len(want) > 0 && len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1] // a final "\n" ends the last line
		}
		lr := NewLineReader(bytes.NewReader(data), limit)
		for i := 0; ; i++ {
			got, err := lr.Next()
			if err == io.EOF {
				if i != len(want) {
					t.Fatalf("%d lines, want %d", i, len(want))
				}
				return
			}
			if i >= len(want) {
				t.Fatalf("line %d beyond the input", i+1)
			}
			w := bytes.TrimSuffix(want[i], []byte("\r"))
			if errors.Is(err, ErrLineTooLong) {
				if len(w) <= limit && len(want[i]) <= limit+1 {
					t.Fatalf("line %d of %d bytes refused with cap %d", i+1, len(w), limit)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, w) {
				t.Fatalf("line %d = %q, want %q", i+1, got, w)
			}
		}
	})
}
