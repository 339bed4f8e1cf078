// Package safefile reads and writes the files kvplan is handed, safely:
//
//   - ReadFile and Open accept regular files only (or "-" for stdin): a FIFO,
//     a device such as /dev/zero, a socket or a directory is refused before
//     a byte is read, so nothing hangs or grows without bound;
//   - every kind of input has a size cap, stated in the error (plan files,
//     catalogs, rule packs, rule tests, config.json, manifests: see Kinds);
//   - LineReader streams a file line by line with a cap on the line length,
//     for traces, which have no total cap;
//   - WriteAtomic writes through a temporary file in the target's directory,
//     synced and renamed over the target, so a failed write leaves the old
//     file intact and no stray file; it never follows a symbolic link, and
//     never replaces an existing file, unless told to (--force).
//
// The package imports only the standard library and must stay that way:
// sim/, which is kept free of project imports, may import it (and only it)
// for its trace files. Keep it small.
package safefile
