package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteOptions say what WriteAtomic may do to what is already at the path.
type WriteOptions struct {
	// Perm is the mode of a new file (0 means 0644); a replaced file keeps
	// its own mode.
	Perm fs.FileMode
	// Overwrite allows replacing an existing regular file (--force).
	Overwrite bool
	// FollowSymlink allows writing to the file a symbolic link at the path
	// points to, even when the link dangles (--force). Without it a link is
	// refused, whether or not its target exists.
	FollowSymlink bool
}

// maxLinks bounds a chain of symbolic links, as the kernel's ELOOP does.
const maxLinks = 40

// WriteAtomic writes data to path atomically: see WriteAtomicFunc.
func WriteAtomic(path string, data []byte, o WriteOptions) error {
	return WriteAtomicFunc(path, o, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteAtomicFunc has write fill a temporary file in the target's directory,
// syncs it, and renames it over the target (or, for a new file without
// Overwrite, links it into place, which fails if another process created the
// file meanwhile). If anything fails, the temporary file is removed and the
// target is as it was. Errors wrapping fs.ErrExist mean the target exists
// and Overwrite is off; a directory, FIFO or device at the path is refused.
func WriteAtomicFunc(path string, o WriteOptions, write func(io.Writer) error) error {
	target, existing, err := resolveTarget(path, o)
	if err != nil {
		return err
	}
	perm := o.Perm
	if perm == 0 {
		perm = 0o644
	}
	if existing != nil {
		perm = existing.Mode().Perm()
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		// The temporary file's name says nothing to the user: say what is
		// wrong with the directory instead.
		if st, serr := os.Stat(dir); serr != nil {
			if errors.Is(serr, fs.ErrNotExist) {
				return fmt.Errorf("write %s: the directory %s does not exist: create it first", path, dir)
			}
			return fmt.Errorf("write %s: %w", path, serr)
		} else if !st.IsDir() {
			return fmt.Errorf("write %s: %s is not a directory", path, dir)
		}
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("write %s: no permission to create files in %s", path, dir)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("write %s: %w (the old file, if any, is untouched)", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if existing == nil && !o.Overwrite {
		// Create-exclusive: a hard link fails if the name appeared since.
		if err := os.Link(tmp.Name(), target); err == nil {
			os.Remove(tmp.Name())
			done = true
			syncDir(dir)
			return nil
		} else if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("write %s: %w; add --force to overwrite it", path, fs.ErrExist)
		}
		// No hard links on this file system: fall through to rename.
	}
	if err := os.Rename(tmp.Name(), target); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	done = true
	syncDir(dir)
	return nil
}

// resolveTarget finds the file to replace: path itself, or with
// FollowSymlink the end of its chain of links. It returns what is there now
// (nil when nothing is), and refuses links, existing files and non-regular
// files as WriteOptions say.
func resolveTarget(path string, o WriteOptions) (string, fs.FileInfo, error) {
	target := path
	for i := 0; ; i++ {
		st, err := os.Lstat(target)
		if errors.Is(err, fs.ErrNotExist) {
			return target, nil, nil
		}
		if err != nil {
			return "", nil, fmt.Errorf("write %s: %w", path, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			dest, err := os.Readlink(target)
			if err != nil {
				return "", nil, fmt.Errorf("write %s: %w", path, err)
			}
			if !o.FollowSymlink {
				return "", nil, fmt.Errorf("write %s: it is a symbolic link to %s; kvplan does not write through a link unless you add --force", path, dest)
			}
			if i == maxLinks {
				return "", nil, fmt.Errorf("write %s: more than %d symbolic links in a row", path, maxLinks)
			}
			if !filepath.IsAbs(dest) {
				dest = filepath.Join(filepath.Dir(target), dest)
			}
			target = dest
			continue
		}
		if !st.Mode().IsRegular() {
			return "", nil, fmt.Errorf("write %s: it is %s; kvplan only replaces regular files", path, describe(st.Mode()))
		}
		if !o.Overwrite {
			return "", nil, fmt.Errorf("write %s: %w; add --force to overwrite it", path, fs.ErrExist)
		}
		return target, st, nil
	}
}

// syncDir makes a rename durable; file systems that cannot sync a
// directory are not an error.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
