//go:build !unix

package safefile

import "os"

// openNonBlocking opens path read-only. Outside Unix there are no FIFOs in
// the file system to wait on.
func openNonBlocking(path string) (*os.File, error) { return os.Open(path) }

func clearNonBlocking(*os.File) error { return nil }
