//go:build unix

package safefile

import (
	"os"
	"syscall"
)

// openNonBlocking opens path read-only without waiting for a FIFO's writer.
func openNonBlocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// clearNonBlocking puts a regular file back in blocking mode (a no-op for
// reads of regular files, but say what we mean).
func clearNonBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
